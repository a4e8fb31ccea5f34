// gemm_s16s16s32_avx2: 16 int16 lanes per register; vpmaddwd multiplies pairs and adds them into
// 8 int32 lanes. Compiled with -mavx2; only called when the CPU reports AVX2.
#include <immintrin.h>

#include <cstdint>

#include "gemm_s16.h"
#include "hsum_avx2.h"

namespace {
#include "gemm_tile.h"

struct Avx2Vec {
  using Reg = __m256i;
  static constexpr int64_t kLanes = 16;
  static Reg zero() { return _mm256_setzero_si256(); }
  static Reg loadA(const int16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static Reg loadB(const int16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static Reg dot(Reg acc, Reg a, Reg b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
  static int32_t hsum(Reg r) { return hsum_epi32_256(r); }
};

void run(const fixpoint::xk::GemmArgs& g) { gemm_tiled<Avx2Vec, 4, 2>(g); }
}  // namespace

namespace fixpoint::xk {
const GemmS16Kernel kGemmS16Avx2{"gemm_s16s16s32_avx2", "avx2", 16, run};
}
