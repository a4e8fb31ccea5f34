// Integer Resize/Upsample, linear modes (34): the float kernel's geometry (ref::resize_plan),
// each tap weight rounded to F = 20 fractional bits on the axes that interpolate, the weighted
// sum of centred codes exact in 128 bits, one RQ.
#include "../common.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

namespace {
constexpr int kWeightBits = 20;  // F in (34)
}  // namespace

void k_resize_linear(QContext& c) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  ref::ResizePlan plan = ref::resize_plan(op.node, x.shape(), c.in);
  FP_CHECK(plan.mode == "linear" && plan.coord != "tf_crop_and_resize", op.node.label(),
           ": the integer Resize kernel is linear without tf_crop_and_resize");
  int64_t r = x.rank();
  // Axes where some output interpolates; the others copy (one tap of weight 1, factor 1).
  std::vector<bool> interp(r, false);
  int axes = 0;
  struct FixedTap {
    int64_t index, weight;  // weight: W = R(w 2^F) on interpolating axes, else 1
  };
  std::vector<std::vector<std::vector<FixedTap>>> taps(r);
  for (int64_t d = 0; d < r; ++d) {
    for (const auto& t : plan.taps[d])
      interp[d] = interp[d] || t.size() != 1 || t[0].weight != 1.0;
    axes += interp[d];
    taps[d].resize(plan.taps[d].size());
    for (size_t o = 0; o < plan.taps[d].size(); ++o) {
      int64_t left = int64_t{1} << kWeightBits;  // the last tap takes the rest: weights sum to 2^F
      const auto& pt = plan.taps[d][o];
      for (size_t k = 0; k < pt.size(); ++k) {
        int64_t W = k + 1 == pt.size() ? left : static_cast<int64_t>(fx::round_half_up(std::ldexp(pt[k].weight, kWeightBits)));
        left -= W;
        taps[d][o].push_back({pt[k].index, interp[d] ? W : 1});
      }
    }
  }
  Tensor& y = c.output(0, plan.out);
  std::vector<int64_t> q = load_codes(x, c.in_q[0].zero_point);
  // M = s_x / s_y as m 2^-n (12), the 2^(F axes) of the weights folded into the shift.
  const auto& p = op.as<params::ResizeLinear>();
  fx::Multiplier mu{p.m, static_cast<int>(p.n + kWeightBits * axes)};
  fx::Range rg = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  std::vector<int64_t> xst = ref::strides_of(x.shape());
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  __int128 a = 0;  // |a| <= 2^(20 axes) * 2^16 * taps: exact
  ref::walk_resize(
      plan.out, taps,
      [&](const std::vector<const FixedTap*>& combo) {
        __int128 w = 1;
        int64_t off = 0;
        for (int64_t d = 0; d < r; ++d) {
          w *= combo[d]->weight;
          off += combo[d]->index * xst[d];
        }
        a += w * q[off];
        return true;
      },
      [&](int64_t o) {
        __int128 v = fx::rsh128(a * mu.m, mu.n);
        yq[o] = v < rg.lo - zy ? rg.lo : (v > rg.hi - zy ? rg.hi : static_cast<int64_t>(v) + zy);
        a = 0;
      });
  store_codes(y, yq);
}


}  // namespace fixpoint::qref
