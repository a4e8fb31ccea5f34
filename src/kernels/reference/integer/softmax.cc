// Integer Softmax (23)-(25), docs/arithmetic.md §5.13.
#include "../common.h"
#include "fixpoint/parallel.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

// Softmax: E = exp table over d = max - q (prepared, (23)); S = sum E (24);
// q_y = SAT(floor((2 E Q + S) / (2 S)))  i.e. R(E Q / S) exactly (25), Q = 1 / s_y.
void k_softmax(QContext& c) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  Tensor& y = c.output(0, x.shape());
  ref::SoftmaxRows rw = ref::softmax_rows(op.node, x.shape());
  std::vector<int64_t> q = load_codes(x, c.in_q[0].zero_point);
  const auto& p = op.as<params::Softmax>();
  const int32_t* E = p.exp_table.data<int32_t>();
  int64_t span = p.exp_table.numel(), Q = p.Q;
  fx::Range r = fx::range_of(c.out_q[0].type);
  std::vector<int64_t> yq(q.size());
  parallel_for(rw.outer * rw.inner, c.threads, [&](int64_t oi) {
    int64_t o = oi / rw.inner, in = oi % rw.inner, base = o * rw.len * rw.inner + in;
    int64_t mx = std::numeric_limits<int64_t>::min();
    for (int64_t j = 0; j < rw.len; ++j) mx = std::max(mx, q[base + j * rw.inner]);
    int64_t S = 0;
    for (int64_t j = 0; j < rw.len; ++j) S += E[std::min(mx - q[base + j * rw.inner], span - 1)];
    for (int64_t j = 0; j < rw.len; ++j) {
      int64_t e = E[std::min(mx - q[base + j * rw.inner], span - 1)];
      yq[base + j * rw.inner] = fx::sat(static_cast<int64_t>(fx::round_div(e * Q, S)), r);  // (25)
    }
  });
  store_codes(y, yq);
}

}  // namespace fixpoint::qref
