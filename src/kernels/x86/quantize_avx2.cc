// quantize_row_f32_avx2 (requant.h): (5) q = SAT(R(r / s) + z) on four float32 values per step,
// in double as fx::quantize computes it: the quotient r / s rounded once (vdivpd), R = floor(x +
// 1/2) (vroundpd toward -inf: the same floor, no libm call), NaN to the zero point (§2.8), and
// the clamp to [lo, hi] before the conversion, so every step is fx::quantize's. Compiled with
// -mavx2; only called when the CPU reports AVX2.
#include <immintrin.h>

#include "requant.h"

namespace fixpoint::xk {

int64_t quantize_row_f32_avx2(const float* x, int64_t count, double scale, int64_t zero_point, int64_t lo, int64_t hi,
                              int32_t* out) {
  const __m256d vs = _mm256_set1_pd(scale), half = _mm256_set1_pd(0.5), vz = _mm256_set1_pd(static_cast<double>(zero_point));
  const __m256d vlo = _mm256_set1_pd(static_cast<double>(lo)), vhi = _mm256_set1_pd(static_cast<double>(hi));
  const int64_t zsat = zero_point < lo ? lo : zero_point > hi ? hi : zero_point;
  const __m256d vnan = _mm256_set1_pd(static_cast<double>(zsat));
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) {
    __m256d r = _mm256_cvtps_pd(_mm_loadu_ps(x + i));
    __m256d v = _mm256_add_pd(_mm256_floor_pd(_mm256_add_pd(_mm256_div_pd(r, vs), half)), vz);
    // !(v >= lo) -> lo (also a NaN quotient of an infinite r / s), v >= hi -> hi, NaN r -> SAT(z)
    v = _mm256_blendv_pd(vlo, v, _mm256_cmp_pd(v, vlo, _CMP_GE_OQ));
    v = _mm256_blendv_pd(v, vhi, _mm256_cmp_pd(v, vhi, _CMP_GE_OQ));
    v = _mm256_blendv_pd(v, vnan, _mm256_cmp_pd(r, r, _CMP_UNORD_Q));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvttpd_epi32(v));
  }
  return i;
}

}  // namespace fixpoint::xk
