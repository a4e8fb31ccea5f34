// quad_interleave_avx512 (quad_interleave.h): 64 pixels of four channel rows per step, the last
// step masked. The byte and word unpacks interleave within each 128-bit lane (lane L of the four
// results holds pixels 16 L + 0-3, 4-7, 8-11, 12-15), so a 4 x 4 transpose of 128-bit lanes puts
// pixels 16 L .. 16 L + 15 into output register L. Stride 2 takes the even bytes of 128 (packus
// works per lane: a qword permute restores the order). Also the byte planes of 16-bit codes.
// Compiled with -mavx512f -mavx512bw.
#include <immintrin.h>

#include "quad_interleave.h"

namespace fixpoint::xk {

namespace {
__mmask64 first_bits(int64_t k) {  // the lowest k of 64 bits, k in [0, 64]
  return k <= 0 ? 0 : k >= 64 ? ~__mmask64{0} : (__mmask64{1} << k) - 1;
}
}  // namespace

void quad_interleave_avx512(const uint8_t* const src[4], int sx, uint8_t flip, int64_t n, uint8_t* out) {
  const __m512i vflip = _mm512_set1_epi8(static_cast<char>(flip)), even = _mm512_set1_epi16(0x00FF);
  const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
  for (int64_t c = 0; c < n; c += 64) {
    const int64_t m = n - c < 64 ? n - c : 64;  // pixels of this step
    // Only the bytes the step's pixels read are loaded (masked loads read nothing else).
    auto load = [&](const uint8_t* s) {
      if (!s) return _mm512_setzero_si512();
      if (sx == 1) return _mm512_xor_si512(_mm512_maskz_loadu_epi8(first_bits(m), s + c), vflip);
      const int64_t need = 2 * m - 1;
      __m512i lo = _mm512_and_si512(_mm512_maskz_loadu_epi8(first_bits(need), s + 2 * c), even);
      __m512i hi = _mm512_and_si512(_mm512_maskz_loadu_epi8(first_bits(need - 64), s + 2 * c + 64), even);
      return _mm512_xor_si512(_mm512_permutexvar_epi64(order, _mm512_packus_epi16(lo, hi)), vflip);
    };
    __m512i a = load(src[0]), b = load(src[1]), d = load(src[2]), e = load(src[3]);
    __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
    __m512i de_lo = _mm512_unpacklo_epi8(d, e), de_hi = _mm512_unpackhi_epi8(d, e);
    __m512i q0 = _mm512_unpacklo_epi16(ab_lo, de_lo), q1 = _mm512_unpackhi_epi16(ab_lo, de_lo);
    __m512i q2 = _mm512_unpacklo_epi16(ab_hi, de_hi), q3 = _mm512_unpackhi_epi16(ab_hi, de_hi);
    __m512i t0 = _mm512_shuffle_i64x2(q0, q1, 0x44), t1 = _mm512_shuffle_i64x2(q2, q3, 0x44);  // lanes 0, 1
    __m512i t2 = _mm512_shuffle_i64x2(q0, q1, 0xEE), t3 = _mm512_shuffle_i64x2(q2, q3, 0xEE);  // lanes 2, 3
    const __m512i o[4] = {_mm512_shuffle_i64x2(t0, t1, 0x88), _mm512_shuffle_i64x2(t0, t1, 0xDD),
                          _mm512_shuffle_i64x2(t2, t3, 0x88), _mm512_shuffle_i64x2(t2, t3, 0xDD)};
    for (int r = 0; r < 4; ++r) _mm512_mask_storeu_epi8(out + 4 * c + 64 * r, first_bits(4 * m - 64 * r), o[r]);
  }
}

void split_bytes_avx512(const uint16_t* x, uint16_t flip, int64_t n, uint8_t* hi, uint8_t* lo) {
  const __m512i vflip = _mm512_set1_epi16(static_cast<short>(flip));
  for (int64_t i = 0; i < n; i += 32) {
    const __mmask32 m = n - i < 32 ? static_cast<__mmask32>((uint64_t{1} << (n - i)) - 1) : ~__mmask32{0};
    __m512i u = _mm512_xor_si512(_mm512_maskz_loadu_epi16(m, x + i), vflip);
    _mm256_mask_storeu_epi8(lo + i, m, _mm512_cvtepi16_epi8(u));
    _mm256_mask_storeu_epi8(hi + i, m, _mm512_cvtepi16_epi8(_mm512_srli_epi16(u, 8)));
  }
}

}  // namespace fixpoint::xk
