// gemm_s16s16s32_avx512vnni: 32 int16 lanes per register; vpdpwssd multiplies pairs and
// accumulates into 16 int32 lanes in one instruction (non-saturating: the same sums as vpmaddwd +
// vpaddd). Compiled with -mavx512f -mavx512bw -mavx512vnni; only called when the CPU reports them.
#include <immintrin.h>

#include <cstdint>

#include "gemm_s16.h"
#include "hsum_avx2.h"

namespace {
#include "gemm_tile.h"

struct Avx512VnniVec {
  using Reg = __m512i;
  static constexpr int64_t kLanes = 32;
  static Reg zero() { return _mm512_setzero_si512(); }
  static Reg loadA(const int16_t* p) { return _mm512_loadu_si512(p); }
  static Reg loadB(const int16_t* p) { return _mm512_loadu_si512(p); }
  static Reg dot(Reg acc, Reg a, Reg b) { return _mm512_dpwssd_epi32(acc, a, b); }
  static int32_t hsum(Reg r) {
    return hsum_epi32_256(_mm256_add_epi32(_mm512_castsi512_si256(r), _mm512_extracti64x4_epi64(r, 1)));
  }
};

void run(const fixpoint::xk::GemmArgs& g) { gemm_tiled<Avx512VnniVec, 4, 2>(g); }
}  // namespace

namespace fixpoint::xk {
const GemmS16Kernel kGemmS16Avx512Vnni{"gemm_s16s16s32_avx512vnni", "avx512vnni", 32, run};
}
