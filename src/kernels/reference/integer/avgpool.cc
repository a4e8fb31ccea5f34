// Integer AveragePool / GlobalAveragePool (19), docs/arithmetic.md §5.6.
#include "../common.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

// AveragePool / GlobalAveragePool (19): a = sum of (q - z) over the window, R(a M / count) with
// M = s_x / s_y and the window's count dividing exactly (fx::requantize_mean).
void k_avgpool(QContext& c) {
  const QOp& op = c.op;
  const Node& n = op.node;
  const Tensor& x = *c.in[0];
  bool global = n.op_type == "GlobalAveragePool";
  FP_CHECK(x.rank() >= 3 && x.rank() <= 5, n.label(), ": input must be 3-D to 5-D");
  Node wn = n;
  if (global) {
    wn.attrs.clear();
    Attribute ks;
    ks.kind = Attribute::Kind::Ints;
    ks.ints.assign(x.shape().begin() + 2, x.shape().end());
    wn.attrs["kernel_shape"] = ks;
  }
  ref::Window w = ref::to_3d(ref::sliding_window(wn, x.shape(), {}, true));
  bool include_pad = wn.attr_int("count_include_pad", 0) != 0;
  Shape ys = {x.dim(0), x.dim(1)};
  for (size_t i = 3 - (x.rank() - 2); i < 3; ++i) ys.push_back(w.out[i]);
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> q = load_codes(x, c.in_q[0].zero_point);
  const auto& p = op.as<params::AvgPool>();
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  fx::Range r = fx::range_of(c.out_q[0].type);
  int64_t zy = c.out_q[0].zero_point;
  int64_t in_plane = w.in[0] * w.in[1] * w.in[2], out_plane = w.out[0] * w.out[1] * w.out[2];
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  for (int64_t nc = 0; nc < x.dim(0) * x.dim(1); ++nc)
    for (int64_t od = 0; od < w.out[0]; ++od)
      for (int64_t oh = 0; oh < w.out[1]; ++oh)
        for (int64_t ow = 0; ow < w.out[2]; ++ow) {
          int64_t sum = 0, count = 0;
          const int64_t o3[3] = {od, oh, ow};
          int64_t padded = include_pad ? ref::padded_window_cells(w, o3) : 0;
          ref::for_each_window_cell(w, od, oh, ow, [&](int64_t id, int64_t ih, int64_t iw) {
            sum += q[nc * in_plane + (id * w.in[1] + ih) * w.in[2] + iw];
            ++count;
          });
          int64_t div = include_pad ? padded : count;
          int64_t o = nc * out_plane + (od * w.out[1] + oh) * w.out[2] + ow;
          if (div == 0) {
            yq[o] = zy;
            continue;
          }
          yq[o] = fx::requantize_mean(sum, mu, div, zy, r);
        }
  store_codes(y, yq);
}

}  // namespace fixpoint::qref
