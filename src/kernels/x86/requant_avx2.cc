// requant_row_s32_avx2: (13) on eight int32 sums per step (requant.h). Compiled with -mavx2; only called
// when the CPU reports AVX2.
//
// a · m (|a| < 2^31, 0 < m < 2^31, so |a · m| < 2^62) is formed in 64-bit lanes by vpmuldq on
// the even and the odd 32-bit lanes. AVX2 has no 64-bit arithmetic shift, so RSH(p, n) =
// floor((p + 2^(n-1)) / 2^n) is taken as a logical shift of p + 2^(n-1) + 2^62, which is in
// (0, 2^64), minus 2^(62-n): exact because 2^n divides 2^62 (1 <= n <= 62). The result is
// clamped to [lo - z, hi - z] in the 64-bit lanes (compare and blend), so its low 32 bits are the
// value, and z is added after the clamp, so nothing wraps. For n >= 32 a shorter form (below).
#include <immintrin.h>

#include "requant.h"

namespace fixpoint::xk {

int64_t requant_row_s32_avx2(int32_t* sum, int64_t count, int32_t bias, int64_t m, int n, int32_t lo_z, int32_t hi_z,
                             int32_t z) {
  const __m256i vb = _mm256_set1_epi32(bias);
  const __m256i vm = _mm256_set1_epi64x(m);
  const __m256i off = _mm256_set1_epi64x((int64_t{1} << (n - 1)) + (int64_t{1} << 62));
  const __m256i corr = _mm256_set1_epi64x(int64_t{1} << (62 - n));
  const __m128i cnt = _mm_cvtsi32_si128(n);
  const __m256i lo = _mm256_set1_epi64x(lo_z), hi = _mm256_set1_epi64x(hi_z);
  auto clamp = [&](__m256i v) {
    v = _mm256_blendv_epi8(v, lo, _mm256_cmpgt_epi64(lo, v));
    return _mm256_blendv_epi8(v, hi, _mm256_cmpgt_epi64(v, hi));
  };
  const __m256i vz = _mm256_set1_epi32(z);
  int64_t i = 0;
  if (n >= 32) {
    // RSH(p, n) = floor((p + 2^(n-1)) / 2^32) >> (n - 32): the high 32 bits of each 64-bit sum
    // (|p| < 2^62: no overflow, and the quotient within int32), then an arithmetic 32-bit shift
    // and a 32-bit clamp on all eight lanes (no 64-bit shift or compares).
    const __m256i half = _mm256_set1_epi64x(int64_t{1} << (n - 1));
    const __m128i cnt32 = _mm_cvtsi32_si128(n - 32);
    const __m256i lo32 = _mm256_set1_epi32(lo_z), hi32 = _mm256_set1_epi32(hi_z);
    for (; i + 8 <= count; i += 8) {
      __m256i a = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sum + i)), vb);
      __m256i e = _mm256_add_epi64(_mm256_mul_epi32(a, vm), half);                         // lanes 0, 2, 4, 6
      __m256i o = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), vm), half);  // lanes 1, 3, 5, 7
      __m256i v = _mm256_sra_epi32(_mm256_blend_epi32(_mm256_srli_epi64(e, 32), o, 0xAA), cnt32);
      v = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(v, lo32), hi32), vz);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(sum + i), v);
    }
    return i;
  }
  for (; i + 8 <= count; i += 8) {
    __m256i a = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sum + i)), vb);
    __m256i pe = _mm256_mul_epi32(a, vm);                         // lanes 0, 2, 4, 6
    __m256i po = _mm256_mul_epi32(_mm256_srli_epi64(a, 32), vm);  // lanes 1, 3, 5, 7
    __m256i ve = clamp(_mm256_sub_epi64(_mm256_srl_epi64(_mm256_add_epi64(pe, off), cnt), corr));
    __m256i vo = clamp(_mm256_sub_epi64(_mm256_srl_epi64(_mm256_add_epi64(po, off), cnt), corr));
    __m256i v = _mm256_add_epi32(_mm256_blend_epi32(ve, _mm256_slli_epi64(vo, 32), 0xAA), vz);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sum + i), v);
  }
  return i;
}

}  // namespace fixpoint::xk
