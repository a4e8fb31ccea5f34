// gemm_u8s8s32_avx2: 16 bytes of A and B per step, widened to int16 (sign- and zero-extended),
// then vpmaddwd: products within 255 * 128 and pairs within 2^16, so unlike vpmaddubsw nothing
// saturates. Compiled with -mavx2; only called when the CPU reports AVX2.
#include <immintrin.h>

#include <cstdint>

#include "gemm_u8s8.h"
#include "hsum_avx2.h"

namespace {
#include "gemm_tile.h"

struct Avx2Vec {
  using Reg = __m256i;
  static constexpr int64_t kLanes = 16;
  static Reg zero() { return _mm256_setzero_si256(); }
  static Reg loadA(const int8_t* p) { return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static Reg loadB(const uint8_t* p) { return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static Reg dot(Reg acc, Reg a, Reg b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
  static int32_t hsum(Reg r) { return hsum_epi32_256(r); }
};

void run(const fixpoint::xk::GemmU8S8Args& g) { gemm_tiled<Avx2Vec, 4, 2>(g); }
}  // namespace

namespace fixpoint::xk {
const GemmU8S8Kernel kGemmU8S8Avx2{"gemm_u8s8s32_avx2", "avx2", 16, false, 1, run};
}
