// Optimized AveragePool / GlobalAveragePool on 8/16-bit codes: typed sums read straight from the
// codes, planes split over threads, instead of the reference's int64 copy of the input; the same
// (19) result: requantize_mean of sum (q - z) over the window's valid cells (padding adds 0 in
// q - z), divided by the valid count or, with count_include_pad, by the padded window's count.
// Global: one sum per plane (no padding, so the divisor is the cell count either way).
// Exact: the sums are taken in int64.
#include <algorithm>
#include <vector>

#include "../reference/common.h"
#include "elementwise_fast.h"
#include "fixpoint/parallel.h"

namespace fixpoint::xk {

namespace {

bool windowed_avgpool(qref::QContext& c) {
  const Tensor& x = *c.in[0];
  const Node& n = c.op.node;
  ref::Window w = ref::to_3d(ref::sliding_window(n, x.shape(), {}, true));
  const bool include_pad = n.attr_int("count_include_pad", 0) != 0;
  Shape ys = {x.dim(0), x.dim(1)};
  for (size_t i = 3 - (x.rank() - 2); i < 3; ++i) ys.push_back(w.out[i]);
  const auto& p = c.op.as<params::AvgPool>();
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  fx::Range r = fx::range_of(c.out_q[0].type);
  const int64_t zx = c.in_q[0].zero_point, zy = c.out_q[0].zero_point;
  const int64_t planes = x.dim(0) * x.dim(1), in_plane = w.in[0] * w.in[1] * w.in[2];
  const int64_t out_plane = w.out[0] * w.out[1] * w.out[2];
  Tensor& y = c.output(0, ys, false);  // every output cell is written
  // Every window inside the input (no padding reached): each divides by D = its cell count, so
  // the output is a function of the window's code sum alone, S in [D lo, D hi]. Where that span
  // is short against the outputs, (19) is evaluated once per S into a table (fx::requantize_mean
  // itself, so the same codes) and each window sums its taps in a plain loop and looks up: the
  // OCR recognizer's 3x2 pool had spent most of its time in the window walk and a division per
  // output.
  bool inside = true;
  for (int i = 0; i < 3; ++i)
    inside = inside && w.pad_begin[i] == 0 && (w.out[i] - 1) * w.stride[i] + (w.kernel[i] - 1) * w.dilation[i] < w.in[i];
  const int64_t D = w.kernel[0] * w.kernel[1] * w.kernel[2];
  const fx::Range rx = fx::range_of(x.dtype());
  const int64_t span = D * (rx.hi - rx.lo) + 1;
  const bool table = inside && w.in[0] == 1 && D > 0 && span <= 8 * planes * out_plane && span <= (int64_t{1} << 16);
  qref::visit_int(x.dtype(), [&](auto tx) {
    qref::visit_int(y.dtype(), [&](auto ty) {
      using X = decltype(tx);
      using Y = decltype(ty);
      const X* px = x.data<X>();
      Y* py = y.data<Y>();
      if (table) {
        std::vector<Y> tab(static_cast<size_t>(span));
        const int64_t s0 = D * rx.lo;
        for (int64_t s = 0; s < span; ++s)
          tab[static_cast<size_t>(s)] = static_cast<Y>(fx::requantize_mean(s0 + s - zx * D, mu, D, zy, r));
        const int64_t KH = w.kernel[1], KW = w.kernel[2], W = w.in[2], OW = w.out[2];
        parallel_for(planes, c.threads, [&](int64_t nc) {
          const X* v = px + nc * in_plane;
          Y* out = py + nc * out_plane;
          for (int64_t oh = 0; oh < w.out[1]; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              const X* c0 = v + oh * w.stride[1] * W + ow * w.stride[2];
              int64_t sum = 0;
              for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) sum += c0[kh * w.dilation[1] * W + kw * w.dilation[2]];
              out[oh * OW + ow] = tab[static_cast<size_t>(sum - s0)];
            }
        });
        return;
      }
      parallel_for(planes, c.threads, [&](int64_t nc) {
        const X* v = px + nc * in_plane;
        Y* out = py + nc * out_plane;
        for (int64_t od = 0; od < w.out[0]; ++od)
          for (int64_t oh = 0; oh < w.out[1]; ++oh)
            for (int64_t ow = 0; ow < w.out[2]; ++ow) {
              int64_t sum = 0, count = 0;
              ref::for_each_window_cell(w, od, oh, ow, [&](int64_t id, int64_t ih, int64_t iw) {
                sum += v[(id * w.in[1] + ih) * w.in[2] + iw];
                ++count;
              });
              const int64_t o3[3] = {od, oh, ow};
              int64_t div = include_pad ? ref::padded_window_cells(w, o3) : count;
              out[(od * w.out[1] + oh) * w.out[2] + ow] =
                  static_cast<Y>(div == 0 ? zy : fx::requantize_mean(sum - zx * count, mu, div, zy, r));
            }
      });
    });
  });
  return true;
}

}  // namespace

bool avgpool_fast(qref::QContext& c) {
  const Tensor& x = *c.in[0];
  const DType t = x.dtype();
  if (x.rank() < 3 || x.rank() > 5 || !(t == DType::Int8 || t == DType::UInt8 || t == DType::Int16 || t == DType::UInt16))
    return false;
  if (c.op.node.op_type == "AveragePool") return windowed_avgpool(c);
  if (c.op.node.op_type != "GlobalAveragePool") return false;
  const int64_t planes = x.dim(0) * x.dim(1), cells = x.numel() / std::max<int64_t>(planes, 1);
  if (cells == 0) return false;
  Shape ys = {x.dim(0), x.dim(1)};
  for (int64_t i = 2; i < x.rank(); ++i) ys.push_back(1);
  const auto& p = c.op.as<params::AvgPool>();
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  fx::Range r = fx::range_of(c.out_q[0].type);
  int64_t zx = c.in_q[0].zero_point, zy = c.out_q[0].zero_point;
  Tensor& y = c.output(0, ys, false);  // every plane's mean is written
  qref::visit_int(t, [&](auto tx) {
    qref::visit_int(y.dtype(), [&](auto ty) {
      using X = decltype(tx);
      using Y = decltype(ty);
      const X* px = x.data<X>();
      Y* py = y.data<Y>();
      parallel_for(planes, c.threads, [&](int64_t i) {
        const X* v = px + i * cells;
        // Blocks of 2^15 codes summed in int32 (|q| < 2^16: exact), a loop GCC vectorizes; the
        // blocks' sums in int64. OCR det's 160x160 planes had summed one int64 at a time.
        int64_t sum = 0;
        for (int64_t k0 = 0; k0 < cells; k0 += 32768) {
          const int64_t k1 = std::min(cells, k0 + 32768);
          int32_t part = 0;
          for (int64_t k = k0; k < k1; ++k) part += v[k];
          sum += part;
        }
        py[i] = static_cast<Y>(fx::requantize_mean(sum - zx * cells, mu, cells, zy, r));
      });
    });
  });
  return true;
}

}  // namespace fixpoint::xk
