// softmax_rows.h on AVX-512F/BW. The sum: sixteen codes a step widened to int32, E[mx - x]
// gathered (vpgatherdd) and added in two int64 accumulators (E < 2^31 and rows below 2^32
// elements keep it exact). The lookup: 32 codes a step in 16-bit lanes, the row table's 256
// words held in registers and read by vpermi2w (a gather of sixteen took as long as the sum's),
// narrowed to bytes for 1-byte outputs (vpmovwb: the values are within them, so truncation is
// exact). The last step masked.
#include <immintrin.h>

#include "softmax_rows.h"

namespace fixpoint::xk {

namespace {
__mmask16 first16(int64_t k) { return k >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << k) - 1); }
__mmask32 first32(int64_t k) { return k >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((uint64_t{1} << k) - 1); }

// Sixteen table indices mx - x_j from j, the lanes past m zero (index 0 is always valid).
__m512i indices(const uint8_t* x, bool is_signed, int64_t j, __mmask16 m, __m512i vmx) {
  const __m128i v = _mm_maskz_loadu_epi8(m, x + j);
  const __m512i w = is_signed ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
  return _mm512_maskz_sub_epi32(m, vmx, w);
}
}  // namespace

int64_t softmax_sum_s8u8_avx512(const uint8_t* x, bool is_signed, int64_t len, int32_t mx, const int32_t* E) {
  const __m512i vmx = _mm512_set1_epi32(mx);
  __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
  for (int64_t j = 0; j < len; j += 16) {
    const __mmask16 m = first16(len - j);
    const __m512i e = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, indices(x, is_signed, j, m, vmx), E, 4);
    lo = _mm512_add_epi64(lo, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(e)));
    hi = _mm512_add_epi64(hi, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(e, 1)));
  }
  return _mm512_reduce_add_epi64(_mm512_add_epi64(lo, hi));
}

void softmax_lookup_s8u8_avx512(const uint8_t* x, bool is_signed, int64_t len, int32_t mx, const uint16_t* t, void* y,
                                int y_bytes) {
  // The table in eight registers of 32 words; an index's bits 0-5 pick a word of a pair of them
  // (vpermi2w), bits 6 and 7 the pair.
  __m512i T[8];
  for (int r = 0; r < 8; ++r) T[r] = _mm512_loadu_si512(t + 32 * r);
  const __m512i vmx = _mm512_set1_epi16(static_cast<short>(mx)), b6 = _mm512_set1_epi16(64), b7 = _mm512_set1_epi16(128);
  for (int64_t j = 0; j < len; j += 32) {
    const __mmask32 m = first32(len - j);
    const __m256i v = _mm256_maskz_loadu_epi8(m, x + j);
    const __m512i w = is_signed ? _mm512_cvtepi8_epi16(v) : _mm512_cvtepu8_epi16(v);
    const __m512i d = _mm512_maskz_sub_epi16(m, vmx, w);  // in [0, 255]; lanes past len 0
    const __m512i r0 = _mm512_permutex2var_epi16(T[0], d, T[1]), r1 = _mm512_permutex2var_epi16(T[2], d, T[3]);
    const __m512i r2 = _mm512_permutex2var_epi16(T[4], d, T[5]), r3 = _mm512_permutex2var_epi16(T[6], d, T[7]);
    const __mmask32 hi6 = _mm512_test_epi16_mask(d, b6), hi7 = _mm512_test_epi16_mask(d, b7);
    const __m512i out = _mm512_mask_blend_epi16(hi7, _mm512_mask_blend_epi16(hi6, r0, r1), _mm512_mask_blend_epi16(hi6, r2, r3));
    if (y_bytes == 1)
      _mm512_mask_cvtepi16_storeu_epi8(static_cast<uint8_t*>(y) + j, m, out);
    else
      _mm512_mask_storeu_epi16(static_cast<uint16_t*>(y) + j, m, out);
  }
}

}  // namespace fixpoint::xk
