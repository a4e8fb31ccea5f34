// Integer Mul (18), docs/arithmetic.md §5.3.
#include "../common.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

void k_mul(QContext& c) {
  const QOp& op = c.op;
  const Tensor &a = *c.in[0], &b = *c.in[1];
  Shape ys = ref::broadcast(a.shape(), b.shape(), op.node);
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> qa = load_codes(a, c.in_q[0].zero_point), qb = load_codes(b, c.in_q[1].zero_point);
  const auto& p = op.as<params::Mul>();
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  fx::Range r = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  bool wide = p.wide;
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  ref::for_each_broadcast<2>(ys, {a.shape(), b.shape()}, [&](int64_t o, const std::array<int64_t, 2>& off) {
    int64_t p = qa[off[0]] * qb[off[1]];
    yq[o] = wide ? fx::requantize_wide(p, mu, zy, r) : fx::requantize(p, mu, zy, r);
  });
  store_codes(y, yq);
}

}  // namespace fixpoint::qref
