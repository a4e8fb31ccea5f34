// Integer PRelu (33), docs/arithmetic.md §5.17.
#include "../common.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

// PRelu (33): q_y = RQ(q_x - z_x) with M = s_x / s_y where q_x >= z_x, else with
// M_k = slope_k s_x / s_y for the slope element k that x's position broadcasts to (a negative
// slope is its magnitude's multiplier applied to the negated value: R(a M) exactly).
void k_prelu(QContext& c) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const auto& p = op.as<params::PRelu>();
  const Tensor &mult = p.neg_mult, &shift = p.neg_shift, &sign = p.neg_sign;
  Tensor& y = c.output(0, x.shape());
  std::vector<int64_t> q = load_codes(x, c.in_q[0].zero_point);
  fx::Multiplier pos{p.m, static_cast<int>(p.n)};
  fx::Range r = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  bool wide = p.wide;
  auto rq = [&](int64_t a, const fx::Multiplier& mu) {
    return wide ? fx::requantize_wide(a, mu, zy, r) : fx::requantize(a, mu, zy, r);
  };
  std::vector<int64_t> yq(q.size());
  ref::for_each_broadcast<2>(x.shape(), {x.shape(), mult.shape()}, [&](int64_t o, const std::array<int64_t, 2>& off) {
    int64_t k = off[1];
    fx::Multiplier neg{mult.data<int64_t>()[k], static_cast<int>(shift.data<int64_t>()[k])};
    yq[o] = q[off[0]] >= 0 ? rq(q[off[0]], pos) : rq(sign.data<int64_t>()[k] * q[off[0]], neg);
  });
  store_codes(y, yq);
}

}  // namespace fixpoint::qref
