// Integer Div of two activations (32), docs/arithmetic.md §5.16.
#include "../common.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

// Div of two activations (32): q_y = SAT(R((q_a - z_a) m / ((q_b - z_b) 2^n)) + z_y), an exact
// ratio of integers rounded once; x / 0 saturates toward the sign of x (0 / 0 gives z_y).
void k_div(QContext& c) {
  const QOp& op = c.op;
  const Tensor &a = *c.in[0], &b = *c.in[1];
  Shape ys = ref::broadcast(a.shape(), b.shape(), op.node);
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> qa = load_codes(a, c.in_q[0].zero_point), qb = load_codes(b, c.in_q[1].zero_point);
  const auto& p = op.as<params::Div>();
  __int128 m = p.m;
  int n = static_cast<int>(p.n);
  __int128 num_shift = n < 0 ? __int128{1} << -n : 1, den_shift = n > 0 ? __int128{1} << n : 1;
  fx::Range r = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  ref::for_each_broadcast<2>(ys, {a.shape(), b.shape()}, [&](int64_t o, const std::array<int64_t, 2>& off) {
    __int128 num = qa[off[0]] * m * num_shift, den = qb[off[1]] * den_shift;
    if (den == 0) {
      yq[o] = num > 0 ? r.hi : num < 0 ? r.lo : fx::sat(zy, r);
      return;
    }
    __int128 v = fx::round_div(num, den);  // |v| <= |num| < 2^113
    yq[o] = v < r.lo - zy ? r.lo : (v > r.hi - zy ? r.hi : static_cast<int64_t>(v) + zy);
  });
  store_codes(y, yq);
}

}  // namespace fixpoint::qref
