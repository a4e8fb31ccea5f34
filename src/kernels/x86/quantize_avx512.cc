// quantize_row_f32_avx512 (requant.h): (5) q = SAT(R(r / s) + z) on sixteen float32 values per
// step, stored as 8- or 16-bit codes, bit for bit fx::quantize's, without its division.
//
// fx::quantize computes g(fl(r / s)) with g(y) = floor(fl(y + 1/2)), in double. Here the quotient
// is taken as y' = fl(r · fl(1 / s)): two roundings of relative error 2^-53 each, so
// |y' - fl(r / s)| <= 3 · 2^-53 |y'| + tiny, below 3 · 2^-23 while |y'| < 2^30. g is
// non-decreasing, so where t = fl(y' + 1/2) lies at least 2^-19 from both integers around it
// (f = floor(t): t - f in [2^-19, 1 - 2^-19], exact), every y within that error of y' has
// fl(y + 1/2) within 3 · 2^-23 + 2 ulp(t) < 2^-19 of t and the same floor: g(fl(r / s)) = f. A
// step with any other lane (a value near a rounding step, |t| >= 2^30, NaN or ±Inf) computes all
// eight lanes of its half as fx::quantize does: the quotient rounded once (vdivpd), R = floor(x +
// 1/2), NaN to SAT(z) (§2.8), the clamp to [lo, hi] before the conversion. Values of uniformly
// spread fractions take the division one time in 2^18; inputs that all lie on rounding ties (a
// scale chosen to make them so) take it always, at the division's speed.
//
// Compiled with -mavx512f -mavx512bw -mavx512vl -ffp-contract=off (each operation rounded once,
// as the argument above counts them); only called on CPUs of the avx512vnni ISA.
#include <immintrin.h>

#include "requant.h"

namespace fixpoint::xk {

int64_t quantize_row_f32_avx512(const float* x, int64_t count, double scale, int64_t zero_point, int64_t lo, int64_t hi,
                                void* out, int out_bytes) {
  const __m512d vs = _mm512_set1_pd(scale), inv = _mm512_set1_pd(1.0 / scale), half = _mm512_set1_pd(0.5);
  const __m512d vz = _mm512_set1_pd(static_cast<double>(zero_point));
  const __m512d vlo = _mm512_set1_pd(static_cast<double>(lo)), vhi = _mm512_set1_pd(static_cast<double>(hi));
  const int64_t zsat = zero_point < lo ? lo : zero_point > hi ? hi : zero_point;
  const __m512d vnan = _mm512_set1_pd(static_cast<double>(zsat));
  const __m512d eps = _mm512_set1_pd(0x1p-19), one_eps = _mm512_set1_pd(1.0 - 0x1p-19), big = _mm512_set1_pd(0x1p30);
  constexpr int kFloor = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  // SAT to [lo, hi] of codes v; !(v >= lo) -> lo also takes a NaN quotient of an infinite r / s.
  auto sat = [&](__m512d v) {
    v = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(v, vlo, _CMP_GE_OQ), vlo, v);
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(v, vhi, _CMP_GE_OQ), v, vhi);
  };
  auto codes = [&](const float* p) {  // eight int32 codes
    const __m512d r = _mm512_cvtps_pd(_mm256_loadu_ps(p));
    const __m512d t = _mm512_add_pd(_mm512_mul_pd(r, inv), half);
    const __m512d f = _mm512_roundscale_pd(t, kFloor);
    const __m512d frac = _mm512_sub_pd(t, f);
    const __mmask8 safe = _mm512_cmp_pd_mask(frac, eps, _CMP_GE_OQ) & _mm512_cmp_pd_mask(frac, one_eps, _CMP_LE_OQ) &
                          _mm512_cmp_pd_mask(_mm512_abs_pd(t), big, _CMP_LT_OQ);
    __m512d v;
    if (safe == 0xFF) {
      v = sat(_mm512_add_pd(f, vz));
    } else {  // fx::quantize's steps
      v = sat(_mm512_add_pd(_mm512_roundscale_pd(_mm512_add_pd(_mm512_div_pd(r, vs), half), kFloor), vz));
      v = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(r, r, _CMP_UNORD_Q), v, vnan);
    }
    return _mm512_cvttpd_epi32(v);
  };
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(codes(x + i)), codes(x + i + 8), 1);
    // Codes within the output type's range: the truncating stores keep them.
    if (out_bytes == 1)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<char*>(out) + i), _mm512_cvtepi32_epi8(v));
    else
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<char*>(out) + 2 * i), _mm512_cvtepi32_epi16(v));
  }
  return i;
}

}  // namespace fixpoint::xk
