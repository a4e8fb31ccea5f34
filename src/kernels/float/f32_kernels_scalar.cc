// f32 microkernels, scalar: one lane, std::fma (the same rounding as the vector tables).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "../reference/unary_ops.h"
#include "f32_kernels.h"

namespace {
#include "f32_kernels_impl.h"

struct Scalar {
  using Reg = float;
  static constexpr int W = 1, NR = 16;
  static Reg zero() { return 0.0f; }
  static Reg load(const float* p) { return *p; }
  static Reg load_strided(const float* p, int64_t) { return *p; }
  static Reg set1(float v) { return v; }
  static Reg fma(Reg a, Reg b, Reg c) { return std::fma(a, b, c); }
  static Reg add(Reg a, Reg b) { return a + b; }
  static void store(float* p, Reg r) { *p = r; }
  static Reg relu(Reg r) { return fixpoint::ref::ReluOp{}(r); }
};

}  // namespace

namespace fixpoint::fk {
const F32Kernels kF32Scalar{"scalar", Scalar::NR, gemm_packed<Scalar>, gemm_indirect<Scalar>, gemm_indirect_pair_as_two<Scalar>, dwconv_plane<Scalar>, pointwise, tanh_row};
}
