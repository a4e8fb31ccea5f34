// Integer MatMul of two activations (21), docs/arithmetic.md §5.11.
#include "../common.h"
#include "fixpoint/parallel.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

// MatMul of two activations (21): a = sum_k (q_a - z_a)(q_b - z_b) over numpy-broadcast batch
// dims, exact in int64, then RQ with M = s_a s_b / s_y.
void k_matmul2(QContext& c) {
  const QOp& op = c.op;
  const Tensor &a = *c.in[0], &b = *c.in[1];
  FP_CHECK(a.rank() >= 2 && b.rank() >= 2 && a.dim(-1) == b.dim(-2), op.node.label(), ": cannot multiply ",
           shape_str(a.shape()), " by ", shape_str(b.shape()));
  int64_t M = a.dim(-2), K = a.dim(-1), N = b.dim(-1);
  Shape ab(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch = ref::broadcast(ab, bb, op.node);
  Shape ys = batch;
  ys.push_back(M);
  ys.push_back(N);
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> qa = load_codes(a, c.in_q[0].zero_point), qb = load_codes(b, c.in_q[1].zero_point);
  const auto& p = op.as<params::MatMul2>();
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  fx::Range r = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  std::vector<std::array<int64_t, 2>> offs;
  ref::for_each_broadcast<2>(batch, {ab, bb}, [&](int64_t, const std::array<int64_t, 2>& off) { offs.push_back(off); });
  parallel_for(static_cast<int64_t>(offs.size()) * M, c.threads, [&](int64_t bi) {
    int64_t o = bi / M, i = bi % M;
    const int64_t* pa = qa.data() + offs[o][0] * M * K + i * K;
    const int64_t* pb = qb.data() + offs[o][1] * K * N;
    for (int64_t j = 0; j < N; ++j) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += pa[k] * pb[k * N + j];
      yq[(o * M + i) * N + j] = fx::requantize_wide(acc, mu, zy, r);
    }
  });
  store_codes(y, yq);
}

}  // namespace fixpoint::qref
