// Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast to M x N. Each output element sums
// over k in increasing order, so every row is computed the same way whatever M is.
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_gemm(KernelContext& c) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(1);
  const Tensor* cc = c.input(2);
  const Node& n = c.node;
  FP_CHECK(a.rank() == 2 && b.rank() == 2, n.label(), ": A and B must be 2-D, got ", shape_str(a.shape()), " and ",
           shape_str(b.shape()));
  FP_CHECK(a.dtype() == b.dtype(), n.label(), ": A and B dtypes differ");
  bool ta = n.attr_int("transA", 0) != 0, tb = n.attr_int("transB", 0) != 0;
  float alpha = n.attr_float("alpha", 1.0f), beta = n.attr_float("beta", 1.0f);
  int64_t M = ta ? a.dim(1) : a.dim(0), K = ta ? a.dim(0) : a.dim(1);
  int64_t Kb = tb ? b.dim(1) : b.dim(0), N = tb ? b.dim(0) : b.dim(1);
  FP_CHECK(K == Kb, n.label(), ": inner dimensions differ: A ", shape_str(a.shape()), (ta ? " (transposed)" : ""),
           ", B ", shape_str(b.shape()), (tb ? " (transposed)" : ""));
  Shape ys = {M, N};
  Tensor& y = c.output(0, a.dtype(), ys);
  std::vector<int64_t> cst;
  if (cc) {
    Shape bs = broadcast(cc->shape(), ys, n);
    FP_CHECK(bs == ys, n.label(), ": C of shape ", shape_str(cc->shape()), " does not broadcast to ", shape_str(ys));
    cst = broadcast_strides(cc->shape(), ys);
  }
  dispatch_numeric(a.dtype(), n, [&](auto tag) {
    using T = decltype(tag);
    using Nm = Num<T>;
    using A = typename Nm::C;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* py = y.data<T>();
    std::vector<A> brow(K);
    for (int64_t j = 0; j < N; ++j) {
      for (int64_t k = 0; k < K; ++k) brow[k] = Nm::load(pb[tb ? j * K + k : k * N + j]);
      for (int64_t i = 0; i < M; ++i) {
        A acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += Nm::load(pa[ta ? k * M + i : i * K + k]) * brow[k];
        A v = static_cast<A>(alpha) * acc;
        if (cc && beta != 0.0f) v += static_cast<A>(beta) * static_cast<A>(cc->get_f64(i * cst[0] + j * cst[1]));
        py[i * N + j] = Nm::store(v);
      }
    }
  });
}

}  // namespace

void register_gemm(KernelRegistry& r) { r.add("Gemm", k_gemm); }

}  // namespace fixpoint::ref
