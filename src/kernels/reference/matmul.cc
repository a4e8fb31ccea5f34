// MatMul with numpy semantics: 1-D operands are promoted (and the added dim removed), batch
// dims broadcast. Each output element sums over k in increasing order.
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_matmul(KernelContext& c) {
  const Tensor& a0 = c.in(0);
  const Tensor& b0 = c.in(1);
  const Node& n = c.node;
  FP_CHECK(a0.rank() >= 1 && b0.rank() >= 1, n.label(), ": operands must be at least 1-D");
  FP_CHECK(a0.dtype() == b0.dtype(), n.label(), ": operand dtypes differ");
  Shape as = a0.shape(), bs = b0.shape();
  bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  FP_CHECK(bs[bs.size() - 2] == K, n.label(), ": inner dimensions differ: ", shape_str(a0.shape()), " x ",
           shape_str(b0.shape()));
  Shape abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
  Shape batch = broadcast(abatch, bbatch, n);
  Shape ys = batch;
  if (!a1) ys.push_back(M);
  if (!b1) ys.push_back(N);
  Tensor& y = c.output(0, a0.dtype(), ys);
  int64_t nb = shape_numel(batch);
  std::vector<int64_t> ast = broadcast_strides(abatch, batch), bst = broadcast_strides(bbatch, batch);
  Shape bidx(batch.size(), 0);
  dispatch_numeric(a0.dtype(), n, [&](auto tag) {
    using T = decltype(tag);
    using Nm = Num<T>;
    using A = typename Nm::C;
    const T* pa = a0.data<T>();
    const T* pb = b0.data<T>();
    T* py = y.data<T>();
    std::vector<A> acc(N);
    for (int64_t bi = 0; bi < nb; ++bi) {
      int64_t aoff = 0, boff = 0, rem = bi;
      for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
        int64_t idx = rem % batch[d];
        rem /= batch[d];
        aoff += idx * ast[d];
        boff += idx * bst[d];
      }
      const T* A_ = pa + aoff * M * K;
      const T* B_ = pb + boff * K * N;
      T* Y = py + bi * M * N;
      for (int64_t i = 0; i < M; ++i) {
        std::fill(acc.begin(), acc.end(), A(0));
        for (int64_t k = 0; k < K; ++k) {
          A av = Nm::load(A_[i * K + k]);
          const T* brow = B_ + k * N;
          for (int64_t j = 0; j < N; ++j) acc[j] += av * Nm::load(brow[j]);
        }
        for (int64_t j = 0; j < N; ++j) Y[i * N + j] = Nm::store(acc[j]);
      }
    }
  });
}

}  // namespace

void register_matmul(KernelRegistry& r) { r.add("MatMul", k_matmul); }

}  // namespace fixpoint::ref
