// depthwise_row_s32_avx512 / _s64_avx512 / _pairs_ and _quads_avx512vnni (depthwise.h): one output
// row of a 2-D depthwise convolution, every tap summed in registers, 16 output columns per step,
// and the planes the _pairs and _quads rows read. Compiled
// with -mavx512f -mavx512bw -mavx512vnni; only called on the avx512vnni ISA (AVX-512 F, BW and
// VNNI).
//
// Inputs are centered codes (q - z) in a zero-padded int32 plane, so padding taps add 0 and no
// tap needs a bounds check. 8-bit codes: |x| <= 255 and |w| < 2^15, products and their sums over
// at most 2^8 taps within int32 (vpmulld). 16-bit codes: |x| <= 65535 and |w| <= 2^15, so a
// product needs 33 bits: vpmuldq forms the even and the odd lanes' products in int64 and the sums
// stay there. Exact either way, so the tap order does not matter.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "depthwise.h"

namespace fixpoint::xk {
namespace {

// Lanes p[0], p[s], ..., p[15 s]: one load for s == 1, two loads and a two-source permute for
// s == 2 (reading p[0..31]), a gather otherwise.
inline __m512i load_strided(const int32_t* p, int64_t s) {
  if (s == 1) return _mm512_loadu_si512(p);
  if (s == 2) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_epi32(_mm512_loadu_si512(p), even, _mm512_loadu_si512(p + 16));
  }
  const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32(static_cast<int>(s)));
  return _mm512_i32gather_epi32(idx, p, 4);
}

}  // namespace

void depthwise_row_s32_avx512(const DepthwiseRowArgs& a, int32_t* out) {
  for (int64_t ow = 0; ow < a.OW; ow += 16) {
    __m512i acc = _mm512_setzero_si512();
    for (int64_t kh = 0; kh < a.KH; ++kh)
      for (int64_t kw = 0; kw < a.KW; ++kw) {
        __m512i x = load_strided(a.rows[kh] + ow * a.sx + kw * a.dw, a.sx);
        acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(x, _mm512_set1_epi32(a.w[kh * a.KW + kw])));
      }
    _mm512_storeu_si512(out + ow, acc);
  }
}

namespace {

// A tap group's dot product on VNNI, per 32-bit lane: vpdpwssd sums two products of int16 halves
// (pairs of centered codes, tap pairs), vpdpbusd four of unsigned and signed bytes (quads of
// shifted codes, int8 tap quads). Neither saturates (the ...s forms would).
template <int G>
inline __m512i dot(__m512i acc, __m512i x, __m512i w) {
  if constexpr (G == 2) return _mm512_dpwssd_epi32(acc, x, w);
  else return _mm512_dpbusd_epi32(acc, x, w);
}

// One output row, G taps an instruction (the _pairs and _quads rows of depthwise.h).
template <int G>
void depthwise_row_groups(const DepthwiseRowArgs& a, int32_t* out) {
  const int64_t KG = (a.KW + G - 1) / G, step = a.group_step > 0 ? a.group_step : G * a.dw;
  int64_t ow = 0;
  // Four vectors of columns at a time: four independent dot chains (their latency is several
  // cycles; one chain per row would wait on it).
  for (; ow + 64 <= a.OW; ow += 64) {
    __m512i acc0 = _mm512_setzero_si512(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    for (int64_t kh = 0; kh < a.KH; ++kh) {
      const int32_t* row = a.rows[kh] + ow * a.sx;
      for (int64_t kg = 0; kg < KG; ++kg, row += step) {
        __m512i w = _mm512_set1_epi32(a.w[kh * KG + kg]);
        acc0 = dot<G>(acc0, load_strided(row, a.sx), w);
        acc1 = dot<G>(acc1, load_strided(row + 16 * a.sx, a.sx), w);
        acc2 = dot<G>(acc2, load_strided(row + 32 * a.sx, a.sx), w);
        acc3 = dot<G>(acc3, load_strided(row + 48 * a.sx, a.sx), w);
      }
    }
    _mm512_storeu_si512(out + ow, acc0);
    _mm512_storeu_si512(out + ow + 16, acc1);
    _mm512_storeu_si512(out + ow + 32, acc2);
    _mm512_storeu_si512(out + ow + 48, acc3);
  }
  for (; ow < a.OW; ow += 16) {
    __m512i acc = _mm512_setzero_si512();
    for (int64_t kh = 0; kh < a.KH; ++kh) {
      const int32_t* row = a.rows[kh] + ow * a.sx;
      for (int64_t kg = 0; kg < KG; ++kg, row += step)
        acc = dot<G>(acc, load_strided(row, a.sx), _mm512_set1_epi32(a.w[kh * KG + kg]));
    }
    _mm512_storeu_si512(out + ow, acc);
  }
}

// Two output rows at once: eight accumulator chains in the 64-column blocks and two in the last
// columns, where one row had four and one (the dot's latency, not its throughput, had bounded
// them). SX and KG_ fixed at compile time where nonzero (the common unit column stride and one to
// three tap groups a row: the loop over groups and the stride's branch had cost as much as the dots).
template <int G, int SX, int KG_>
void depthwise_two_rows_groups(const DepthwiseRowArgs& a, const int32_t* const* rows1, int32_t* out0, int32_t* out1) {
  const int64_t KG = KG_ ? KG_ : (a.KW + G - 1) / G, step = a.group_step > 0 ? a.group_step : G * a.dw;
  const int64_t sx = SX ? SX : a.sx;
  int64_t ow = 0;
  for (; ow + 64 <= a.OW; ow += 64) {
    __m512i p0 = _mm512_setzero_si512(), p1 = p0, p2 = p0, p3 = p0, q0 = p0, q1 = p0, q2 = p0, q3 = p0;
    for (int64_t kh = 0; kh < a.KH; ++kh) {
      const int32_t *r0 = a.rows[kh] + ow * sx, *r1 = rows1[kh] + ow * sx;
      for (int64_t kg = 0; kg < KG; ++kg, r0 += step, r1 += step) {
        const __m512i w = _mm512_set1_epi32(a.w[kh * KG + kg]);
        p0 = dot<G>(p0, load_strided(r0, sx), w);
        p1 = dot<G>(p1, load_strided(r0 + 16 * sx, sx), w);
        p2 = dot<G>(p2, load_strided(r0 + 32 * sx, sx), w);
        p3 = dot<G>(p3, load_strided(r0 + 48 * sx, sx), w);
        q0 = dot<G>(q0, load_strided(r1, sx), w);
        q1 = dot<G>(q1, load_strided(r1 + 16 * sx, sx), w);
        q2 = dot<G>(q2, load_strided(r1 + 32 * sx, sx), w);
        q3 = dot<G>(q3, load_strided(r1 + 48 * sx, sx), w);
      }
    }
    _mm512_storeu_si512(out0 + ow, p0);
    _mm512_storeu_si512(out0 + ow + 16, p1);
    _mm512_storeu_si512(out0 + ow + 32, p2);
    _mm512_storeu_si512(out0 + ow + 48, p3);
    _mm512_storeu_si512(out1 + ow, q0);
    _mm512_storeu_si512(out1 + ow + 16, q1);
    _mm512_storeu_si512(out1 + ow + 32, q2);
    _mm512_storeu_si512(out1 + ow + 48, q3);
  }
  for (; ow < a.OW; ow += 16) {
    __m512i p = _mm512_setzero_si512(), q = p;
    for (int64_t kh = 0; kh < a.KH; ++kh) {
      const int32_t *r0 = a.rows[kh] + ow * sx, *r1 = rows1[kh] + ow * sx;
      for (int64_t kg = 0; kg < KG; ++kg, r0 += step, r1 += step) {
        const __m512i w = _mm512_set1_epi32(a.w[kh * KG + kg]);
        p = dot<G>(p, load_strided(r0, sx), w);
        q = dot<G>(q, load_strided(r1, sx), w);
      }
    }
    _mm512_storeu_si512(out0 + ow, p);
    _mm512_storeu_si512(out1 + ow, q);
  }
}

template <int G>
void depthwise_two_rows_any(const DepthwiseRowArgs& a, const int32_t* const* rows1, int32_t* out0, int32_t* out1) {
  const int64_t KG = (a.KW + G - 1) / G;
  if (a.sx == 1 && KG == 1) return depthwise_two_rows_groups<G, 1, 1>(a, rows1, out0, out1);
  if (a.sx == 1 && KG == 2) return depthwise_two_rows_groups<G, 1, 2>(a, rows1, out0, out1);
  if (a.sx == 1 && KG == 3) return depthwise_two_rows_groups<G, 1, 3>(a, rows1, out0, out1);
  if (a.sx == 1) return depthwise_two_rows_groups<G, 1, 0>(a, rows1, out0, out1);
  depthwise_two_rows_groups<G, 0, 0>(a, rows1, out0, out1);
}

}  // namespace

void depthwise_row_pairs_avx512vnni(const DepthwiseRowArgs& a, int32_t* out) { depthwise_row_groups<2>(a, out); }
void depthwise_two_rows_pairs_avx512vnni(const DepthwiseRowArgs& a, const int32_t* const* rows1, int32_t* out0,
                                         int32_t* out1) {
  depthwise_two_rows_any<2>(a, rows1, out0, out1);
}
void depthwise_row_quads_avx512vnni(const DepthwiseRowArgs& a, int32_t* out) { depthwise_row_groups<4>(a, out); }
void depthwise_two_rows_quads_avx512vnni(const DepthwiseRowArgs& a, const int32_t* const* rows1, int32_t* out0,
                                         int32_t* out1) {
  depthwise_two_rows_any<4>(a, rows1, out0, out1);
}

void depthwise_shifted_row_avx512(const void* src, int64_t W, int64_t pl, uint8_t flip, uint8_t zu, int64_t n,
                                  uint8_t* u) {
  const __m512i vz = _mm512_set1_epi8(static_cast<char>(zu)), vf = _mm512_set1_epi8(static_cast<char>(flip));
  const int8_t* s8 = static_cast<const int8_t*>(src);
  // z_u up to the row, the row's codes (flipped), z_u after it: whole stores, each part
  // overwriting the slack of the one before (u is written up to n rounded up to 64, plus 64).
  for (int64_t j = 0; j < pl; j += 64) _mm512_storeu_si512(u + j, vz);
  int64_t j = 0;
  for (; j + 64 <= W; j += 64) _mm512_storeu_si512(u + pl + j, _mm512_xor_si512(_mm512_loadu_si512(s8 + j), vf));
  if (j < W) {  // a masked load reads (and may fault on) no masked-out byte
    const __mmask64 in = (__mmask64{1} << (W - j)) - 1;
    _mm512_storeu_si512(u + pl + j, _mm512_xor_si512(_mm512_maskz_loadu_epi8(in, s8 + j), vf));
  }
  for (j = pl + W; j < n; j += 64) _mm512_storeu_si512(u + j, vz);
}

void depthwise_quad_row_avx512vnni(const uint8_t* u, int64_t dw, int64_t n, int32_t* out) {
  int64_t j = 0;
  for (; j + 64 <= n; j += 64) {
    const __m512i a = _mm512_loadu_si512(u + j), b = _mm512_loadu_si512(u + j + dw), c = _mm512_loadu_si512(u + j + 2 * dw),
                  d = _mm512_loadu_si512(u + j + 3 * dw);
    // Within each 128-bit lane L (columns 16 L .. 16 L + 15): bytes interleaved to words
    // (u(j), u(j + dw)) and (u(j + 2 dw), u(j + 3 dw)), words to dwords; q_i holds columns
    // 16 L + 4 i .. 16 L + 4 i + 3 in lane L.
    const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
    const __m512i cd_lo = _mm512_unpacklo_epi8(c, d), cd_hi = _mm512_unpackhi_epi8(c, d);
    const __m512i q0 = _mm512_unpacklo_epi16(ab_lo, cd_lo), q1 = _mm512_unpackhi_epi16(ab_lo, cd_lo);
    const __m512i q2 = _mm512_unpacklo_epi16(ab_hi, cd_hi), q3 = _mm512_unpackhi_epi16(ab_hi, cd_hi);
    // The 4 x 4 transpose of 128-bit lanes: vector L = lane L of q0, q1, q2, q3 (columns in order).
    const __m512i t0 = _mm512_shuffle_i32x4(q0, q1, 0x44), t1 = _mm512_shuffle_i32x4(q2, q3, 0x44);
    const __m512i t2 = _mm512_shuffle_i32x4(q0, q1, 0xEE), t3 = _mm512_shuffle_i32x4(q2, q3, 0xEE);
    _mm512_storeu_si512(out + j, _mm512_shuffle_i32x4(t0, t1, 0x88));
    _mm512_storeu_si512(out + j + 16, _mm512_shuffle_i32x4(t0, t1, 0xDD));
    _mm512_storeu_si512(out + j + 32, _mm512_shuffle_i32x4(t2, t3, 0x88));
    _mm512_storeu_si512(out + j + 48, _mm512_shuffle_i32x4(t2, t3, 0xDD));
  }
  for (; j < n; j += 16) {  // one 128-bit lane of the above
    auto at = [&](int64_t k) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(u + j + k)); };
    const __m128i a = at(0), b = at(dw), c = at(2 * dw), d = at(3 * dw);
    const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
    const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
    __m128i* o = reinterpret_cast<__m128i*>(out + j);
    _mm_storeu_si128(o, _mm_unpacklo_epi16(ab_lo, cd_lo));
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
    _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
    _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
  }
}

void depthwise_split_pairs_avx512(const int32_t* c, int64_t dw, int64_t n, int32_t* lo, int32_t* hi) {
  const __m512i low = _mm512_set1_epi32(0xFF), word = _mm512_set1_epi32(0xFFFF);
  for (int64_t j = 0; j < n; j += 16) {
    const __m512i a = _mm512_loadu_si512(c + j), b = _mm512_loadu_si512(c + j + dw);
    // c = 2^8 h + l, l = c & 255, h = c >> 8 (floor): low halves l(j), h(j); high l(j + dw), h(j + dw).
    _mm512_storeu_si512(lo + j, _mm512_or_si512(_mm512_and_si512(a, low), _mm512_slli_epi32(_mm512_and_si512(b, low), 16)));
    _mm512_storeu_si512(hi + j, _mm512_or_si512(_mm512_and_si512(_mm512_srai_epi32(a, 8), word),
                                                _mm512_slli_epi32(_mm512_srai_epi32(b, 8), 16)));
  }
}

namespace {

// c(j0 + k) for k < 16: the centered codes of columns j0 .. j0 + 15, 0 outside [pl, pl + W).
inline __m512i centered16(const void* src, bool is_signed, int64_t W, int64_t pl, __m512i z, int64_t j0) {
  int64_t lo = std::max<int64_t>(0, pl - j0), hi = std::min<int64_t>(16, pl + W - j0);
  if (hi <= lo) return _mm512_setzero_si512();
  if (lo == 0 && hi == 16) {  // inside the row: a plain load
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const int8_t*>(src) + (j0 - pl)));
    return _mm512_sub_epi32(is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b), z);
  }
  __mmask16 m16 = static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
  // A masked load reads (and may fault on) no masked-out byte.
  __m512i bytes = _mm512_maskz_loadu_epi8(m16, static_cast<const int8_t*>(src) + (j0 - pl));
  __m128i b = _mm512_castsi512_si128(bytes);
  __m512i v = is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
  return _mm512_maskz_sub_epi32(m16, v, z);
}

}  // namespace

void depthwise_pair_row_avx512vnni(const void* src, bool is_signed, int64_t W, int64_t pl, int32_t z, int64_t dw,
                                   int64_t PW, int32_t* out) {
  const __m512i vz = _mm512_set1_epi32(z), low = _mm512_set1_epi32(0xFFFF);
  int64_t j = 0;
  // Columns whose 32 codes and the 32 a dilation on lie inside the row: centered in 16-bit
  // lanes (|c| <= 255), interleaved as pairs by vpunpck{l,h}wd (within 128-bit lanes) and put in
  // column order by two-source qword permutes.
  const __m512i z16 = _mm512_set1_epi16(static_cast<int16_t>(z));
  const __m512i first = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), second = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  const int8_t* s8 = static_cast<const int8_t*>(src);
  auto words = [&](int64_t col) {  // c(col .. col + 31) as int16
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s8 + (col - pl)));
    return _mm512_sub_epi16(is_signed ? _mm512_cvtepi8_epi16(b) : _mm512_cvtepu8_epi16(b), z16);
  };
  for (; j < pl; j += 16) {  // the left padding, 16 columns at a time as below
    __m512i a = centered16(src, is_signed, W, pl, vz, j), b = centered16(src, is_signed, W, pl, vz, j + dw);
    __m512i pair = _mm512_or_si512(_mm512_and_si512(a, low), _mm512_slli_epi32(b, 16));
    __mmask16 keep = PW - j >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (PW - j)) - 1);
    _mm512_mask_storeu_epi32(out + j, keep, pair);
  }
  for (; j + 32 <= PW && j >= pl && j + dw + 32 <= pl + W; j += 32) {
    const __m512i a = words(j), b = words(j + dw);
    const __m512i lo = _mm512_unpacklo_epi16(a, b), hi = _mm512_unpackhi_epi16(a, b);
    _mm512_storeu_si512(out + j, _mm512_permutex2var_epi64(lo, first, hi));
    _mm512_storeu_si512(out + j + 16, _mm512_permutex2var_epi64(lo, second, hi));
  }
  for (; j < PW; j += 16) {
    __m512i a = centered16(src, is_signed, W, pl, vz, j), b = centered16(src, is_signed, W, pl, vz, j + dw);
    __m512i pair = _mm512_or_si512(_mm512_and_si512(a, low), _mm512_slli_epi32(b, 16));
    __mmask16 keep = PW - j >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (PW - j)) - 1);
    _mm512_mask_storeu_epi32(out + j, keep, pair);
  }
}

void depthwise_half_row_avx512vnni(const void* src, bool is_signed, int64_t W, int64_t pl, int32_t z, int64_t RS,
                                   int32_t* out) {
  const __m512i z16 = _mm512_set1_epi16(static_cast<int16_t>(z));
  const int8_t* s8 = static_cast<const int8_t*>(src);
  for (int64_t i = 0; i < RS; i += 16) {
    const int64_t j0 = 2 * i, lo = std::max<int64_t>(0, pl - j0), hi = std::min<int64_t>(32, pl + W - j0);
    const __mmask32 in = hi <= lo ? 0 : static_cast<__mmask32>((hi - lo == 32 ? ~0u : ((1u << (hi - lo)) - 1)) << lo);
    // A masked load reads (and may fault on) no masked-out byte; columns outside the row are 0.
    const __m256i b = _mm512_castsi512_si256(_mm512_maskz_loadu_epi8(in, s8 + (j0 - pl)));
    const __m512i c = _mm512_maskz_sub_epi16(in, is_signed ? _mm512_cvtepi8_epi16(b) : _mm512_cvtepu8_epi16(b), z16);
    const __mmask16 keep = RS - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (RS - i)) - 1);
    _mm512_mask_storeu_epi32(out + i, keep, c);  // dword i = (c(2i), c(2i + 1)), low word first
  }
}

void depthwise_row_s64_avx512(const DepthwiseRowArgs& a, int64_t* out) {
  const __m512i lo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), hi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
  for (int64_t ow = 0; ow < a.OW; ow += 16) {
    __m512i even = _mm512_setzero_si512(), odd = _mm512_setzero_si512();
    for (int64_t kh = 0; kh < a.KH; ++kh)
      for (int64_t kw = 0; kw < a.KW; ++kw) {
        __m512i x = load_strided(a.rows[kh] + ow * a.sx + kw * a.dw, a.sx);
        __m512i w = _mm512_set1_epi64(a.w[kh * a.KW + kw]);
        even = _mm512_add_epi64(even, _mm512_mul_epi32(x, w));
        odd = _mm512_add_epi64(odd, _mm512_mul_epi32(_mm512_srli_epi64(x, 32), w));
      }
    _mm512_storeu_si512(out + ow, _mm512_permutex2var_epi64(even, lo, odd));
    _mm512_storeu_si512(out + ow + 8, _mm512_permutex2var_epi64(even, hi, odd));
  }
}

}  // namespace fixpoint::xk
