// addsub_row_avx2 (addsub_row.h): (17) on eight 8- or 16-bit codes per step. Compiled with
// -mavx2; only called when the CPU reports AVX2.
//
// Codes widen to int32 lanes minus their zero points (|v| <= 65535). v · A is formed exactly in
// 64-bit lanes from two vpmuldq (signed 32 x 32 -> 64) on the even and the odd lanes: A = A1 2^24
// + A0 with A0 in [0, 2^24) and A1 = floor(A / 2^24), both within int32 for |A| < 2^55, and
// v A = (v A1) 2^24 + v A0, every term within int64 under the caller's bound |s| < 2^61. RSH(s, L)
// is taken as in requant_avx2.cc: a logical shift of s + 2^(L-1) + 2^62 (in (0, 2^64)) minus
// 2^(62-L), exact since 2^L divides 2^62; then clamped to [lo - z, hi - z] in 64-bit lanes, so the
// low 32 bits hold the value, and z is added after the clamp.
#include <immintrin.h>

#include "addsub_row.h"

namespace fixpoint::xk {
namespace {

struct Lanes {  // one operand's constants
  __m256i z, c0, c1, fixed;
  const uint8_t* p;
  int bytes;
  bool is_signed, step;
};

__m256i widen(const uint8_t* p, int bytes, bool is_signed) {
  if (bytes == 1) {
    __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return is_signed ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
  }
  __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return is_signed ? _mm256_cvtepi16_epi32(v) : _mm256_cvtepu16_epi32(v);
}

Lanes lanes(const AddSubOperand& o) {
  Lanes l;
  l.p = static_cast<const uint8_t*>(o.codes);
  l.bytes = o.bytes;
  l.is_signed = o.is_signed;
  l.step = o.step;
  l.z = _mm256_set1_epi32(o.zero_point);
  l.c0 = _mm256_set1_epi64x(o.coef & ((int64_t{1} << 24) - 1));
  l.c1 = _mm256_set1_epi64x(o.coef >> 24);
  // A broadcast operand's row is one code (read alone: a vector load would read past it): the
  // same lanes every step.
  if (!o.step) {
    int32_t q;
    if (l.bytes == 1) q = l.is_signed ? static_cast<int8_t>(l.p[0]) : l.p[0];
    else q = l.is_signed ? static_cast<int16_t>(l.p[0] | l.p[1] << 8) : static_cast<uint16_t>(l.p[0] | l.p[1] << 8);
    l.fixed = _mm256_set1_epi32(q - o.zero_point);
  } else {
    l.fixed = _mm256_setzero_si256();
  }
  return l;
}

// v · coef in the even 64-bit halves of v's lanes (their low 32 bits, sign-extended).
__m256i times(__m256i v, const Lanes& l) {
  return _mm256_add_epi64(_mm256_slli_epi64(_mm256_mul_epi32(v, l.c1), 24), _mm256_mul_epi32(v, l.c0));
}

}  // namespace

int64_t addsub_row_avx2(const AddSubOperand& a, const AddSubOperand& b, void* y, int y_bytes, int64_t count, int L,
                        int32_t lo_z, int32_t hi_z, int32_t zy) {
  const Lanes la = lanes(a), lb = lanes(b);
  uint8_t* py = static_cast<uint8_t*>(y);
  const __m256i off = _mm256_set1_epi64x((int64_t{1} << (L - 1)) + (int64_t{1} << 62));
  const __m256i corr = _mm256_set1_epi64x(int64_t{1} << (62 - L));
  const __m128i cnt = _mm_cvtsi32_si128(L);
  const __m256i lo = _mm256_set1_epi64x(lo_z), hi = _mm256_set1_epi64x(hi_z), vz = _mm256_set1_epi32(zy);
  // The low byte (or two) of each int32 lane to the front of its 128-bit half, then the two
  // halves' results side by side.
  const __m256i pick = y_bytes == 1 ? _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                                       0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)
                                    : _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                                       0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i join = y_bytes == 1 ? _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1) : _mm256_setr_epi32(0, 1, 4, 5, 2, 2, 2, 2);
  auto rsh_clamp = [&](__m256i s) {
    __m256i v = _mm256_sub_epi64(_mm256_srl_epi64(_mm256_add_epi64(s, off), cnt), corr);
    v = _mm256_blendv_epi8(v, lo, _mm256_cmpgt_epi64(lo, v));
    return _mm256_blendv_epi8(v, hi, _mm256_cmpgt_epi64(v, hi));
  };
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m256i va = la.step ? _mm256_sub_epi32(widen(la.p + i * la.bytes, la.bytes, la.is_signed), la.z) : la.fixed;
    __m256i vb = lb.step ? _mm256_sub_epi32(widen(lb.p + i * lb.bytes, lb.bytes, lb.is_signed), lb.z) : lb.fixed;
    __m256i se = _mm256_add_epi64(times(va, la), times(vb, lb));  // lanes 0, 2, 4, 6
    __m256i so = _mm256_add_epi64(times(_mm256_srli_epi64(va, 32), la), times(_mm256_srli_epi64(vb, 32), lb));
    __m256i v = _mm256_add_epi32(_mm256_blend_epi32(rsh_clamp(se), _mm256_slli_epi64(rsh_clamp(so), 32), 0xAA), vz);
    __m256i packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, pick), join);
    if (y_bytes == 1) _mm_storel_epi64(reinterpret_cast<__m128i*>(py + i), _mm256_castsi256_si128(packed));
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(py + 2 * i), _mm256_castsi256_si128(packed));
  }
  return i;
}

}  // namespace fixpoint::xk
