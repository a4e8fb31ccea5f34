// table_curve_s16_x8_avx2 (table_curve.h): (20a) on eight codes per step, AVX2. Compiled with
// -ffp-contract=off (no FMA: each step the one IEEE operation fixpoint/table_curve.h names).
#include <immintrin.h>

#include "table_curve.h"

namespace fixpoint::xk {

void table_curve_s16_x8_avx2(const int16_t* x, uint8_t* y, int64_t n, const fx::TableCurve& c, const uint8_t* table,
                             int64_t lo) {
  const __m256 ta = _mm256_set1_ps(c.ta), tb = _mm256_set1_ps(c.tb), ua = _mm256_set1_ps(c.ua), ub = _mm256_set1_ps(c.ub),
               b = _mm256_set1_ps(c.b), zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f),
               ylo = _mm256_set1_ps(c.lo), yhi = _mm256_set1_ps(c.hi), near_half = _mm256_set1_ps(0.5f - fx::kCurveMargin),
               sign = _mm256_set1_ps(-0.0f);
  // The low byte of each 32-bit lane, gathered into the low 4 bytes of each 128-bit half.
  const __m256i bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1,
                                         -1, -1, -1, -1, -1, -1, -1, -1, -1);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
    __m256 t = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(_mm256_mul_ps(q, ta), tb), zero), one);
    __m256 u = _mm256_add_ps(_mm256_mul_ps(q, ua), ub);
    __m256 v = _mm256_add_ps(_mm256_mul_ps(u, t), b);
    __m256 r = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    int near = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(v, r)), near_half, _CMP_GE_OQ));
    r = _mm256_min_ps(_mm256_max_ps(r, ylo), yhi);
    __m256i p = _mm256_shuffle_epi8(_mm256_cvtps_epi32(r), bytes);
    uint32_t w0 = static_cast<uint32_t>(_mm256_extract_epi32(p, 0)), w1 = static_cast<uint32_t>(_mm256_extract_epi32(p, 4));
    uint64_t w = w0 | static_cast<uint64_t>(w1) << 32;
    __builtin_memcpy(y + i, &w, 8);
    for (; near; near &= near - 1) {
      int64_t j = i + __builtin_ctz(static_cast<unsigned>(near));
      y[j] = table[x[j] - lo];
    }
  }
  for (; i < n; ++i) y[i] = table[x[i] - lo];
}

}  // namespace fixpoint::xk
