// add_shifted_s32_avx512 / requant_row_s64_avx512 (requant.h): the int64 sums of 16-bit layers,
// eight per step. Compiled with -mavx512f; only called when the CPU reports AVX-512.
//
// (13) for a product of up to 94 bits without 128-bit lanes: with a = ah 2^32 + al (ah signed,
// |ah| < 2^31; 0 <= al < 2^32), a m = P1 2^32 + P0 for P1 = ah m (vpmuldq, |P1| < 2^62) and
// P0 = al m (vpmuludq, 0 <= P0 < 2^63). With H = P1 + floor(P0 / 2^32) and L = P0 mod 2^32,
// a m + 2^(n-1) = (H + 2^(k-1)) 2^32 + L for k = n - 32 >= 1, and since 0 <= L < 2^32,
//   RSH(a m, n) = floor((a m + 2^(n-1)) / 2^n) = floor((H + 2^(k-1)) / 2^k)   (4)
// an arithmetic shift of a value below 2^63 for k <= 61. The result is below 2^61, so the clamp
// to [lo - z, hi - z] and + z are exact in int64, as in fx::requantize_wide.
#include <immintrin.h>

#include "requant.h"

namespace fixpoint::xk {

void add_shifted_s32_avx512(int64_t* sum, const int32_t* acc, int64_t count, int shift) {
  const __m128i cnt = _mm_cvtsi32_si128(shift);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m512i a = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i)));
    __m512i s = _mm512_loadu_si512(sum + i);
    _mm512_storeu_si512(sum + i, _mm512_add_epi64(s, _mm512_sll_epi64(a, cnt)));
  }
  for (; i < count; ++i) sum[i] += static_cast<int64_t>(acc[i]) * (int64_t{1} << shift);
}

int64_t requant_row_s64_avx512(int64_t* sum, int64_t count, int64_t bias, int64_t m, int n, int64_t lo_z, int64_t hi_z,
                               int64_t z) {
  const int k = n - 32;
  const __m512i vb = _mm512_set1_epi64(bias), vm = _mm512_set1_epi64(m);
  const __m512i half = _mm512_set1_epi64(int64_t{1} << (k - 1));
  const __m128i cnt = _mm_cvtsi32_si128(k);
  const __m512i lo = _mm512_set1_epi64(lo_z), hi = _mm512_set1_epi64(hi_z), vz = _mm512_set1_epi64(z);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m512i a = _mm512_add_epi64(_mm512_loadu_si512(sum + i), vb);
    __m512i p1 = _mm512_mul_epi32(_mm512_srai_epi64(a, 32), vm);  // ah m
    __m512i p0 = _mm512_mul_epu32(a, vm);                          // al m
    __m512i h = _mm512_add_epi64(p1, _mm512_srli_epi64(p0, 32));
    __m512i v = _mm512_sra_epi64(_mm512_add_epi64(h, half), cnt);
    v = _mm512_min_epi64(_mm512_max_epi64(v, lo), hi);
    _mm512_storeu_si512(sum + i, _mm512_add_epi64(v, vz));
  }
  return i;
}

}  // namespace fixpoint::xk
