// MaxPool, AveragePool (pads, dilations, ceil_mode, count_include_pad), GlobalAveragePool,
// GlobalMaxPool. The window walk is common.h's for_each_window_cell (1-D to 3-D, padded to 3 dims).
#include <limits>

#include "average_pool_plane.h"
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_max_pool(KernelContext& c) {
  const Tensor& x = c.in(0);
  FP_CHECK(x.rank() >= 3 && x.rank() <= 5, c.node.label(), ": input must be 3-D to 5-D, got ", shape_str(x.shape()));
  Window w = sliding_window(c.node, x.shape(), {}, true);
  Window w3 = to_3d(w);
  int64_t N = x.dim(0), C = x.dim(1);
  Shape ys = {N, C};
  ys.insert(ys.end(), w.out.begin(), w.out.end());
  Tensor& y = c.output(0, x.dtype(), ys);
  bool want_idx = c.wants_output(1);
  int64_t* pidx = want_idx ? c.output(1, DType::Int64, ys).data<int64_t>() : nullptr;
  bool col_major = c.node.attr_int("storage_order", 0) == 1;
  int64_t in_plane = w3.in[0] * w3.in[1] * w3.in[2], out_plane = w3.out[0] * w3.out[1] * w3.out[2];
  dispatch_numeric(x.dtype(), c.node, [&](auto tag) {
    using T = decltype(tag);
    using Nm = Num<T>;
    using A = typename Nm::C;
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (int64_t nc = 0; nc < N * C; ++nc) {
      const T* xp = px + nc * in_plane;
      for (int64_t od = 0; od < w3.out[0]; ++od)
        for (int64_t oh = 0; oh < w3.out[1]; ++oh)
          for (int64_t ow = 0; ow < w3.out[2]; ++ow) {
            A best = std::numeric_limits<A>::lowest();
            if constexpr (std::is_floating_point_v<A>) best = -std::numeric_limits<A>::infinity();
            int64_t best_i = -1;
            for_each_window_cell(w3, od, oh, ow, [&](int64_t id, int64_t ih, int64_t iw) {
              int64_t i = (id * w3.in[1] + ih) * w3.in[2] + iw;
              A v = Nm::load(xp[i]);
              // NaN wins and stays (NaN propagates, docs/float_reference.md).
              if (best_i < 0 || v > best || (v != v && best == best)) {
                best = v;
                best_i = col_major ? (iw * w3.in[1] + ih) * w3.in[0] + id : i;
              }
            });
            int64_t o = nc * out_plane + (od * w3.out[1] + oh) * w3.out[2] + ow;
            py[o] = Nm::store(best);
            if (pidx) pidx[o] = nc * in_plane + best_i;
          }
    }
  });
}

void k_average_pool(KernelContext& c) {
  const Tensor& x = c.in(0);
  FP_CHECK(x.rank() >= 3 && x.rank() <= 5, c.node.label(), ": input must be 3-D to 5-D, got ", shape_str(x.shape()));
  Window w = sliding_window(c.node, x.shape(), {}, true);
  Window w3 = to_3d(w);
  bool include_pad = c.node.attr_int("count_include_pad", 0) != 0;
  int64_t N = x.dim(0), C = x.dim(1);
  Shape ys = {N, C};
  ys.insert(ys.end(), w.out.begin(), w.out.end());
  Tensor& y = c.output(0, x.dtype(), ys);
  int64_t in_plane = w3.in[0] * w3.in[1] * w3.in[2], out_plane = w3.out[0] * w3.out[1] * w3.out[2];
  dispatch_float(x.dtype(), c.node, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t nc = 0; nc < N * C; ++nc)
      average_pool_plane(w3, include_pad, x.data<T>() + nc * in_plane, y.data<T>() + nc * out_plane);
  });
}

// Global pools reduce every spatial position of each (n, c) plane.
template <bool IsMax>
void global_pool(KernelContext& c) {
  const Tensor& x = c.in(0);
  FP_CHECK(x.rank() >= 2, c.node.label(), ": input must be N x C x ..., got ", shape_str(x.shape()));
  Shape ys = {x.dim(0), x.dim(1)};
  for (int64_t i = 2; i < x.rank(); ++i) ys.push_back(1);
  Tensor& y = c.output(0, x.dtype(), ys);
  int64_t plane = x.rank() > 2 ? x.numel() / std::max<int64_t>(1, x.dim(0) * x.dim(1)) : 1;
  dispatch_float(x.dtype(), c.node, [&](auto tag) {
    using T = decltype(tag);
    using Nm = Num<T>;
    using A = typename Nm::C;
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (int64_t nc = 0; nc < x.dim(0) * x.dim(1); ++nc) {
      A acc = IsMax ? -std::numeric_limits<A>::infinity() : A(0);
      for (int64_t i = 0; i < plane; ++i) {
        A v = Nm::load(px[nc * plane + i]);
        acc = IsMax ? (v > acc || v != v || acc != acc ? (acc != acc ? acc : v) : acc) : acc + v;  // NaN propagates
      }
      py[nc] = Nm::store(IsMax ? acc : acc / static_cast<A>(plane));
    }
  });
}

}  // namespace

void register_pool(KernelRegistry& r) {
  r.add("MaxPool", k_max_pool);
  r.add("AveragePool", k_average_pool);
  r.add("GlobalAveragePool", global_pool<false>);
  r.add("GlobalMaxPool", global_pool<true>);
}

}  // namespace fixpoint::ref
