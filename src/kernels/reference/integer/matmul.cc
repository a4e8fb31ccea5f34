// Integer Gemm / MatMul with constant weights, docs/arithmetic.md (14)-(15).
#include "../common.h"
#include "fixpoint/parallel.h"
#include "integer_kernels.h"

namespace fixpoint::qref {
namespace {

// Gemm (A: M x K) and MatMul (A: ... x K) against prepared W[N][K].
template <typename Acc>
void matmul_impl(QContext& c) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const Tensor& w = weighted(op).weight;
  int64_t N = w.dim(0), K = w.dim(1);
  FP_CHECK(x.rank() >= 1 && x.dim(-1) == K, op.node.label(), ": input ", shape_str(x.shape()), " does not have ", K,
           " columns");
  Shape ys = x.shape();
  ys.back() = N;
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> xq = load_codes(x, c.in_q[0].zero_point);
  std::vector<int16_t> wcodes = weight_codes(weighted(op));
  const int16_t* pw = wcodes.data();
  ChannelRequant rq(c);
  int64_t rows = x.numel() / std::max<int64_t>(K, 1);
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  parallel_for(rows, c.threads, [&](int64_t i) {
    for (int64_t j = 0; j < N; ++j) {
      Acc a = static_cast<Acc>(rq.bias[j]);
      for (int64_t k = 0; k < K; ++k) a += static_cast<Acc>(xq[i * K + k]) * pw[j * K + k];
      yq[i * N + j] = rq(a, j);
    }
  });
  store_codes(y, yq);
}

}  // namespace

void k_matmul(QContext& c) {
  if (weighted(c.op).wide) matmul_impl<int64_t>(c);
  else matmul_impl<int32_t>(c);
}

}  // namespace fixpoint::qref
