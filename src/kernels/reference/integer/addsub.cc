// Integer Add/Sub (16)-(17), docs/arithmetic.md §5.2.
#include "../common.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

void k_addsub(QContext& c) {
  const QOp& op = c.op;
  const Tensor &a = *c.in[0], &b = *c.in[1];
  Shape ys = ref::broadcast(a.shape(), b.shape(), op.node);
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> qa = load_codes(a, c.in_q[0].zero_point), qb = load_codes(b, c.in_q[1].zero_point);
  const auto& p = op.as<params::AddSub>();
  __int128 A = p.A, B = p.B * p.sign;
  int L = static_cast<int>(p.L);
  fx::Range r = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  ref::for_each_broadcast<2>(ys, {a.shape(), b.shape()}, [&](int64_t o, const std::array<int64_t, 2>& off) {
    __int128 v = fx::rsh128(qa[off[0]] * A + qb[off[1]] * B, L);
    yq[o] = v < r.lo - zy ? r.lo : (v > r.hi - zy ? r.hi : static_cast<int64_t>(v) + zy);
  });
  store_codes(y, yq);
}

}  // namespace fixpoint::qref
