// Relu, Sigmoid, Tanh and Clip on float32, on the fast path: the reference's per-element
// definitions (src/kernels/reference/unary_ops.h, so the same bits by construction) in
// vectorizable loops over chunks of the tensor; Tanh (U1) through the ISA table's row, which
// computes the same bits 16 lanes at a time on AVX-512. Sigmoid (a libm call per element) and
// Tanh split the chunks between threads; Relu and Clip, bound by memory, run on
// kElementwiseThreads (fast_float_ops.h).
#include <algorithm>
#include <type_traits>

#include "../reference/unary_ops.h"
#include "f32_kernels.h"
#include "fast_float_ops.h"
#include "fixpoint/parallel.h"

namespace fixpoint::fk {
namespace {

constexpr int64_t kChunk = 16384;  // elements per task (independent: any split, the same bits)

template <typename F>
void map_f32(const float* __restrict x, float* __restrict y, int64_t n, int threads, F f) {
  parallel_for_chunks(n, kChunk, threads, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) y[i] = f(x[i]);
  });
}

struct Relu : ref::ReluOp {
  static constexpr bool kMemoryBound = true;
};
struct Sigmoid : ref::SigmoidOp {
  static constexpr bool kMemoryBound = false;
};
struct Tanh : ref::TanhOp {
  static constexpr bool kMemoryBound = false;
};

template <typename Op>
class UnaryF32 final : public PreparedKernel {
 public:
  bool run(KernelContext& c) const override {
    const Tensor& x = c.in(0);
    if (x.dtype() != DType::Float32) return false;
    Tensor& y = c.output(0, DType::Float32, x.shape(), false);  // every element written
    if constexpr (std::is_same_v<Op, Tanh>)
      if (const F32Kernels* k = selected_f32_kernels()) {
        const float* px = x.data<float>();
        float* py = y.data<float>();
        parallel_for_chunks(x.numel(), kChunk, c.threads, [&](int64_t lo, int64_t hi) { k->tanh(px + lo, py + lo, hi - lo); });
        return true;
      }
    map_f32(x.data<float>(), y.data<float>(), x.numel(), Op::kMemoryBound ? kElementwiseThreads : c.threads, Op{});
    return true;
  }
};

class ClipF32 final : public PreparedKernel {
 public:
  bool run(KernelContext& c) const override {
    const Tensor& x = c.in(0);
    if (x.dtype() != DType::Float32) return false;
    float lo, hi;
    ref::clip_bounds<float>(c, lo, hi);
    Tensor& y = c.output(0, DType::Float32, x.shape(), false);
    map_f32(x.data<float>(), y.data<float>(), x.numel(), kElementwiseThreads, [lo, hi](float v) { return ref::clip_value(v, lo, hi); });
    return true;
  }
};

}  // namespace

void register_unary_f32(KernelRegistry& r) {
  r.add_prepared("Relu", prepare_stateless<UnaryF32<Relu>>);
  r.add_prepared("Sigmoid", prepare_stateless<UnaryF32<Sigmoid>>);
  r.add_prepared("Tanh", prepare_stateless<UnaryF32<Tanh>>);
  r.add_prepared("Clip", prepare_stateless<ClipF32>);
}

}  // namespace fixpoint::fk
