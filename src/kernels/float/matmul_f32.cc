// MatMul and Gemm, float32, on the fast path: Y[r][j] = F1 over k of A[r][k] * B[k][j] (+ the
// bias row of Gemm, added last). B is packed once at prepare when it is a constant (weights), else
// once per run and batch matrix, in panels of the table's width; A rows are packed 6 at a time into the microkernel's panel.
// Tasks are (block of 6 rows, block of columns), so any thread count and any number of rows
// computes every element by the same chain.
#include <algorithm>

#include "../reference/common.h"
#include "fixpoint/task_buffer.h"
#include "f32_kernels.h"
#include "fast_float_ops.h"
#include "fixpoint/graph_match.h"
#include "fixpoint/parallel.h"

namespace fixpoint::fk {

void pack_b_panels(const float* b, int64_t K, int64_t N, int64_t ks, int64_t js, int NR, float* dst) {
  for (int64_t j0 = 0; j0 < N; j0 += NR) {
    int64_t nr = std::min<int64_t>(NR, N - j0);
    float* panel = dst + (j0 / NR) * K * NR;
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < NR; ++j) panel[k * NR + j] = j < nr ? b[k * ks + (j0 + j) * js] : 0.0f;
  }
}

namespace {

int64_t panels_of(int64_t n, int64_t nr) { return (n + nr - 1) / nr; }

// Y (R x N, row stride N) = A (R x K, row stride K) x packed B, plus bias[j] when given.
void gemm_rows(const F32Kernels* k, const float* A, int64_t R, int64_t K, const float* bp, int64_t N,
               const float* bias, float* Y, int threads) {
  const int64_t NR = k->nr, kPanelsPerTask = 128 / NR;  // 128 columns per task
  int64_t row_blocks = (R + kMR - 1) / kMR, col_blocks = (panels_of(N, NR) + kPanelsPerTask - 1) / kPanelsPerTask;
  parallel_for(row_blocks * col_blocks, threads, [&](int64_t task) {
    int64_t rb = task / col_blocks, cb = task % col_blocks;
    int64_t r0 = rb * kMR;
    int mr = static_cast<int>(std::min<int64_t>(kMR, R - r0));
    float* ap = task_buffer<float, __LINE__>(static_cast<size_t>(K * kMR), 0.0f);
    for (int i = 0; i < mr; ++i)
      for (int64_t kk = 0; kk < K; ++kk) ap[kk * kMR + i] = A[(r0 + i) * K + kk];
    int64_t j_end = std::min(N, (cb + 1) * kPanelsPerTask * NR);
    for (int64_t j0 = cb * kPanelsPerTask * NR; j0 < j_end; j0 += NR) {
      int nr = static_cast<int>(std::min<int64_t>(NR, N - j0));
      float* y = Y + r0 * N + j0;
      k->gemm(K, ap, bp + (j0 / NR) * K * NR, y, N, mr, nr);
      if (bias)
        for (int i = 0; i < mr; ++i)
          for (int j = 0; j < nr; ++j) y[i * N + j] = y[i * N + j] + bias[j0 + j];
    }
  });
}

class MatMulF32 final : public PreparedKernel {
 public:
  MatMulF32(const F32Kernels* k, const Tensor* b) : k_(k) {
    if (!b) return;
    K_ = b->dim(0);
    N_ = b->dim(1);
    packed_.resize(static_cast<size_t>(panels_of(N_, k->nr) * K_ * k->nr));
    pack_b_panels(b->data<float>(), K_, N_, N_, 1, k->nr, packed_.data());
  }

  bool run(KernelContext& c) const override {
    const Tensor& a = c.in(0);
    const Tensor& b = c.in(1);
    if (a.dtype() != DType::Float32 || b.dtype() != DType::Float32 || a.rank() < 2 || b.rank() < 2) return false;
    int64_t K = a.dim(-1), M = a.dim(-2), N = b.dim(-1);
    if (b.dim(-2) != K) return false;  // the reference kernel reports it
    Shape abatch(a.shape().begin(), a.shape().end() - 2), bbatch(b.shape().begin(), b.shape().end() - 2);
    if (!packed_.empty()) {  // constant 2-D B: all of A's rows in one GEMM
      Shape ys = a.shape();
      ys.back() = N;
      Tensor& y = c.output(0, DType::Float32, ys, K == 0);  // K > 0: every element written
      gemm_rows(k_, a.data<float>(), a.numel() / std::max<int64_t>(K, 1), K, packed_.data(), N, nullptr,
                y.data<float>(), c.threads);
      return true;
    }
    if (abatch != bbatch && !bbatch.empty()) return false;  // broadcasting batches: the reference
    Shape ys = abatch;
    ys.push_back(M);
    ys.push_back(N);
    Tensor& y = c.output(0, DType::Float32, ys, K == 0);
    int64_t nb = shape_numel(abatch), bstep = bbatch.empty() ? 0 : K * N;
    float* bp = task_buffer<float, __LINE__>(static_cast<size_t>(panels_of(N, k_->nr) * K * k_->nr));
    for (int64_t i = 0; i < nb; ++i) {
      if (i == 0 || bstep) pack_b_panels(b.data<float>() + i * bstep, K, N, N, 1, k_->nr, bp);
      gemm_rows(k_, a.data<float>() + i * M * K, M, K, bp, N, nullptr, y.data<float>() + i * M * N, c.threads);
    }
    return true;
  }

 private:
  const F32Kernels* k_;
  int64_t K_ = 0, N_ = 0;
  std::vector<float> packed_;
};

// Gemm with transA = 0, alpha = 1, a constant B and a constant C of N values (or none).
class GemmF32 final : public PreparedKernel {
 public:
  GemmF32(const F32Kernels* k, const Tensor& b, bool tb, const Tensor* cc, float beta) : k_(k) {
    K_ = tb ? b.dim(1) : b.dim(0);
    N_ = tb ? b.dim(0) : b.dim(1);
    packed_.resize(static_cast<size_t>(panels_of(N_, k->nr) * K_ * k->nr));
    pack_b_panels(b.data<float>(), K_, N_, tb ? 1 : N_, tb ? K_ : 1, k->nr, packed_.data());
    if (cc && beta != 0.0f) {
      bias_.resize(static_cast<size_t>(N_));
      for (int64_t j = 0; j < N_; ++j) bias_[j] = beta * cc->data<float>()[cc->numel() == 1 ? 0 : j];
    }
  }

  bool run(KernelContext& c) const override {
    const Tensor& a = c.in(0);
    if (a.dtype() != DType::Float32 || a.rank() != 2 || a.dim(1) != K_) return false;
    Tensor& y = c.output(0, DType::Float32, {a.dim(0), N_}, K_ == 0);
    gemm_rows(k_, a.data<float>(), a.dim(0), K_, packed_.data(), N_, bias_.empty() ? nullptr : bias_.data(),
              y.data<float>(), c.threads);
    return true;
  }

 private:
  const F32Kernels* k_;
  int64_t K_, N_;
  std::vector<float> packed_, bias_;
};

}  // namespace

std::unique_ptr<PreparedKernel> prepare_matmul_f32(const Node& n, const Graph& g, const F32Kernels* k) {
  if (!k || n.inputs.size() != 2) return nullptr;
  const Tensor* b = match::constant(g, n.inputs[1]);
  if (b && (b->dtype() != DType::Float32 || b->rank() != 2)) b = nullptr;  // packed per run
  return std::make_unique<MatMulF32>(k, b);
}

std::unique_ptr<PreparedKernel> prepare_gemm_f32(const Node& n, const Graph& g, const F32Kernels* k) {
  if (!k || n.inputs.size() < 2 || n.attr_int("transA", 0) != 0 || n.attr_float("alpha", 1.0f) != 1.0f) return nullptr;
  const Tensor* b = match::constant(g, n.inputs[1]);
  if (!b || b->dtype() != DType::Float32 || b->rank() != 2) return nullptr;
  bool tb = n.attr_int("transB", 0) != 0;
  int64_t N = tb ? b->dim(0) : b->dim(1);
  const Tensor* cc = nullptr;
  float beta = n.attr_float("beta", 1.0f);
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    cc = match::constant(g, n.inputs[2]);
    if (!cc || cc->dtype() != DType::Float32) return nullptr;
    bool row = cc->numel() == 1 || (cc->numel() == N && (cc->rank() == 1 || (cc->rank() == 2 && cc->dim(0) == 1)));
    if (!row) return nullptr;
  }
  return std::make_unique<GemmF32>(k, *b, tb, cc, beta);
}

}  // namespace fixpoint::fk
