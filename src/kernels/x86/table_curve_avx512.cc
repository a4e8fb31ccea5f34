// table_curve_s16_x8_avx512 (table_curve.h): (20a) on sixteen codes per step. Compiled with
// -ffp-contract=off: each step must be the one IEEE operation fixpoint/table_curve.h names, or
// the values would differ from those the compiler and the loader checked against the table.
#include <immintrin.h>

#include "table_curve.h"

namespace fixpoint::xk {

void table_curve_s16_x8_avx512(const int16_t* x, uint8_t* y, int64_t n, const fx::TableCurve& c, const uint8_t* table,
                               int64_t lo) {
  const __m512 ta = _mm512_set1_ps(c.ta), tb = _mm512_set1_ps(c.tb), ua = _mm512_set1_ps(c.ua),
               ub = _mm512_set1_ps(c.ub), b = _mm512_set1_ps(c.b), zero = _mm512_setzero_ps(),
               one = _mm512_set1_ps(1.0f), ylo = _mm512_set1_ps(c.lo), yhi = _mm512_set1_ps(c.hi),
               near_half = _mm512_set1_ps(0.5f - fx::kCurveMargin);
  // Sixteen codes: their output bytes, and a bit per code near a boundary (20a).
  auto step = [&](const int16_t* px, uint8_t* py) {
    __m512 q = _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(px))));
    __m512 t = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(_mm512_mul_ps(q, ta), tb), zero), one);
    __m512 u = _mm512_add_ps(_mm512_mul_ps(q, ua), ub);
    __m512 v = _mm512_add_ps(_mm512_mul_ps(u, t), b);
    __m512 r = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __mmask16 near = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(v, r)), near_half, _CMP_GE_OQ);
    r = _mm512_min_ps(_mm512_max_ps(r, ylo), yhi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(py), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(r)));
    return near;
  };
  auto from_table = [&](int64_t i, uint32_t near) {
    for (; near; near &= near - 1) {
      int64_t j = i + __builtin_ctz(near);
      y[j] = table[x[j] - lo];
    }
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) from_table(i, step(x + i, y + i));  // (two chains per step: no faster)
  for (; i < n; ++i) y[i] = table[x[i] - lo];
}

}  // namespace fixpoint::xk
