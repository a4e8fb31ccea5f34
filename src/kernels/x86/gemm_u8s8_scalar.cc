// gemm_u8s8s32_scalar: the tiled loop on plain int32 "registers" (one lane). Portable; the
// fallback when the CPU has no AVX2.
#include <cstdint>

#include "gemm_u8s8.h"

namespace {
#include "gemm_tile.h"

struct ScalarVec {
  using Reg = int32_t;
  static constexpr int64_t kLanes = 1;
  static Reg zero() { return 0; }
  static Reg loadA(const int8_t* p) { return *p; }
  static Reg loadB(const uint8_t* p) { return *p; }
  static Reg dot(Reg acc, Reg a, Reg b) { return acc + a * b; }
  static int32_t hsum(Reg r) { return r; }
};

void run(const fixpoint::xk::GemmU8S8Args& g) { gemm_tiled<ScalarVec, 4, 2>(g); }
}  // namespace

namespace fixpoint::xk {
const GemmU8S8Kernel kGemmU8S8Scalar{"gemm_u8s8s32_scalar", "scalar", 1, false, 1, run};
}
