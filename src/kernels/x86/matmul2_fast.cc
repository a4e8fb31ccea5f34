// Optimized run step of MatMul of two activations (21), docs/arithmetic.md §5.11: the
// reference's exact sums of centered codes, sum_k (q_a - z_a)(q_b - z_b), with each batch
// matrix of B transposed once so that every output is a contiguous dot product (the reference
// walks B's columns with stride N over int64 copies of the codes), summed in int32 where the
// bound allows (|q_a - z_a| |q_b - z_b| K < 2^31: 8-bit codes), else int64; then RQ (13) exactly
// as the reference (requantize_wide). Integer sums are exact, so the codes are the reference's
// (tests/kernels/x86/matmul2_fast_test.cc).
#include <array>
#include <vector>

#include "../reference/common.h"
#include "elementwise_fast.h"
#include "fixpoint/parallel.h"

namespace fixpoint::xk {

namespace {

// The centered codes of t (8/16-bit) as int32.
std::vector<int32_t> centered(const Tensor& t, int64_t z) {
  std::vector<int32_t> v(static_cast<size_t>(t.numel()));
  qref::visit_int(t.dtype(), [&](auto tag) {
    const auto* p = t.data<decltype(tag)>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(p[i] - z);
  });
  return v;
}

template <typename Acc>
Acc dot(const int32_t* a, const int32_t* b, int64_t K) {
  Acc acc = 0;
  for (int64_t k = 0; k < K; ++k) acc += static_cast<Acc>(a[k]) * b[k];
  return acc;
}

}  // namespace

bool matmul2_fast(qref::QContext& c) {
  const QOp& op = c.op;
  const Tensor &a = *c.in[0], &b = *c.in[1];
  if (!narrow(a.dtype()) || !narrow(b.dtype()) || !narrow(c.out_q[0].type)) return false;
  if (a.rank() < 2 || b.rank() < 2 || a.dim(-1) != b.dim(-2)) return false;  // the reference names the fault
  const int64_t M = a.dim(-2), K = a.dim(-1), N = b.dim(-1);
  Shape ab(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch = ref::broadcast(ab, bb, op.node);
  Shape ys = batch;
  ys.push_back(M);
  ys.push_back(N);
  Tensor& y = c.output(0, ys, false);  // every element is written below
  const auto& p = op.as<params::MatMul2>();
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  fx::Range r = qref::clamp_range(p);
  const int64_t zy = c.out_q[0].zero_point;
  std::vector<int32_t> qa = centered(a, c.in_q[0].zero_point), qb = centered(b, c.in_q[1].zero_point);
  // B's batch matrices transposed: bt[(m N + j) K + k] = B[m][k][j].
  const int64_t nb = shape_numel(bb);
  std::vector<int32_t> bt(qb.size());
  for (int64_t m = 0; m < nb; ++m)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) bt[static_cast<size_t>((m * N + j) * K + k)] = qb[static_cast<size_t>((m * K + k) * N + j)];
  std::vector<std::array<int64_t, 2>> offs;
  ref::for_each_broadcast<2>(batch, {ab, bb}, [&](int64_t, const std::array<int64_t, 2>& off) { offs.push_back(off); });
  auto span = [](DType t) { return dtype_size(t) == 1 ? int64_t{255} : int64_t{65535}; };
  const bool sums32 = static_cast<__int128>(span(a.dtype())) * span(b.dtype()) * K < (static_cast<__int128>(1) << 31);
  qref::visit_int(y.dtype(), [&](auto tag) {
    using Y = decltype(tag);
    Y* py = y.data<Y>();
    parallel_for(static_cast<int64_t>(offs.size()) * M, c.threads, [&](int64_t bi) {
      int64_t o = bi / M, i = bi % M;
      const int32_t* pa = qa.data() + offs[o][0] * M * K + i * K;
      const int32_t* pb = bt.data() + offs[o][1] * N * K;
      Y* out = py + (o * M + i) * N;
      for (int64_t j = 0; j < N; ++j) {
        int64_t acc = sums32 ? dot<int32_t>(pa, pb + j * K, K) : dot<int64_t>(pa, pb + j * K, K);
        out[j] = static_cast<Y>(fx::requantize_wide(acc, mu, zy, r));
      }
    });
  });
  return true;
}

}  // namespace fixpoint::xk
