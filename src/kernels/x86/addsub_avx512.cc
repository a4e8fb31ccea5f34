// addsub_row_avx512 (addsub_row.h): (17) on eight 8- or 16-bit codes per step, AVX-512F/DQ: the
// centered codes widened to 64-bit lanes and multiplied by A and B in one vpmullq each (the
// exact products: below 2^61), AVX-512's 64-bit arithmetic shift and min/max for RSH(s, L) =
// (s + 2^(L-1)) >> L and the clamp to [lo - z, hi - z]; z added after the clamp. (Sixteen codes
// per step with A split in 24-bit halves on vpmuldq, as addsub_avx2.cc does: 40 instructions per
// sixteen codes against 28, and det's Add ops 20% slower.)
// mul_row_wide_avx512: Mul's 16 x 16-bit (13) in 64-bit lanes (vpmuldq for the product of the
// centered codes, vpmullq for its product with m). Callers check the CPU (the avx512vnni ISA has
// AVX-512 F and DQ).
#include <immintrin.h>

#include "addsub_row.h"

namespace fixpoint::xk {
namespace {

struct Lanes {  // one operand's constants (32-bit lanes for Mul's row, 64-bit for Add/Sub's)
  __m512i z, fixed, z64, coef64, fixed64;
  const uint8_t* p;
  int bytes;
  bool is_signed, step;
};

__m512i widen(const uint8_t* p, int bytes, bool is_signed) {
  if (bytes == 1) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return is_signed ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
  }
  __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return is_signed ? _mm512_cvtepi16_epi32(v) : _mm512_cvtepu16_epi32(v);
}

Lanes lanes(const AddSubOperand& o) {
  Lanes l;
  l.p = static_cast<const uint8_t*>(o.codes);
  l.bytes = o.bytes;
  l.is_signed = o.is_signed;
  l.step = o.step;
  l.z = _mm512_set1_epi32(o.zero_point);
  l.z64 = _mm512_set1_epi64(o.zero_point);
  l.coef64 = _mm512_set1_epi64(o.coef);
  // A broadcast operand's row is one code (read alone: a vector load would read past it).
  if (!o.step) {
    int32_t q;
    if (l.bytes == 1) q = l.is_signed ? static_cast<int8_t>(l.p[0]) : l.p[0];
    else q = l.is_signed ? static_cast<int16_t>(l.p[0] | l.p[1] << 8) : static_cast<uint16_t>(l.p[0] | l.p[1] << 8);
    l.fixed = _mm512_set1_epi32(q - o.zero_point);
    l.fixed64 = _mm512_set1_epi64(q - o.zero_point);
  } else {
    l.fixed = l.fixed64 = _mm512_setzero_si512();
  }
  return l;
}

// Eight codes of an operand from element i, centered (q - z), in 64-bit lanes.
__m512i centered64(const Lanes& l, int64_t i) {
  if (!l.step) return l.fixed64;
  const uint8_t* p = l.p + i * l.bytes;
  __m512i v;
  if (l.bytes == 1) {
    __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    v = l.is_signed ? _mm512_cvtepi8_epi64(x) : _mm512_cvtepu8_epi64(x);
  } else {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    v = l.is_signed ? _mm512_cvtepi16_epi64(x) : _mm512_cvtepu16_epi64(x);
  }
  return _mm512_sub_epi64(v, l.z64);
}

}  // namespace

int64_t addsub_row_avx512(const AddSubOperand& a, const AddSubOperand& b, void* y, int y_bytes, int64_t count, int L,
                          int32_t lo_z, int32_t hi_z, int32_t zy) {
  const Lanes la = lanes(a), lb = lanes(b);
  uint8_t* py = static_cast<uint8_t*>(y);
  const __m512i half = _mm512_set1_epi64(int64_t{1} << (L - 1));
  const __m128i cnt = _mm_cvtsi32_si128(L);
  const __m512i lo = _mm512_set1_epi64(lo_z), hi = _mm512_set1_epi64(hi_z), vz = _mm512_set1_epi64(zy);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    // (q_a - z_a) A + (q_b - z_b) B: each product below 2^61 (the caller's bound), so vpmullq's
    // low 64 bits are the product, and so is their sum.
    __m512i s = _mm512_add_epi64(_mm512_mullo_epi64(centered64(la, i), la.coef64),
                                 _mm512_mullo_epi64(centered64(lb, i), lb.coef64));
    __m512i v = _mm512_min_epi64(_mm512_max_epi64(_mm512_sra_epi64(_mm512_add_epi64(s, half), cnt), lo), hi);
    v = _mm512_add_epi64(v, vz);
    if (y_bytes == 1) _mm_storel_epi64(reinterpret_cast<__m128i*>(py + i), _mm512_cvtepi64_epi8(v));
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(py + 2 * i), _mm512_cvtepi64_epi16(v));
  }
  return i;
}

int64_t mul_row_wide_avx512(const AddSubOperand& a, const AddSubOperand& b, void* y, int y_bytes, int64_t count, int64_t m,
                            int n, int32_t lo_z, int32_t hi_z, int32_t zy) {
  const Lanes la = lanes(a), lb = lanes(b);
  uint8_t* py = static_cast<uint8_t*>(y);
  const __m512i vm = _mm512_set1_epi64(m), one = _mm512_set1_epi64(1);
  const __m128i cn = _mm_cvtsi32_si128(n), cn1 = _mm_cvtsi32_si128(n - 1);
  const __m512i lo = _mm512_set1_epi64(lo_z), hi = _mm512_set1_epi64(hi_z), vz = _mm512_set1_epi32(zy);
  const bool zero = n >= 64;  // RSH(p, n) = 0 for every |p| < 2^63
  auto rq = [&](__m512i ab) {
    __m512i r = _mm512_setzero_si512();
    if (!zero) {
      __m512i p = _mm512_mullo_epi64(ab, vm);
      r = _mm512_add_epi64(_mm512_sra_epi64(p, cn), _mm512_and_si512(_mm512_sra_epi64(p, cn1), one));
    }
    return _mm512_min_epi64(_mm512_max_epi64(r, lo), hi);
  };
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    __m512i va = la.step ? _mm512_sub_epi32(widen(la.p + i * la.bytes, la.bytes, la.is_signed), la.z) : la.fixed;
    __m512i vb = lb.step ? _mm512_sub_epi32(widen(lb.p + i * lb.bytes, lb.bytes, lb.is_signed), lb.z) : lb.fixed;
    __m512i ve = rq(_mm512_mul_epi32(va, vb));                                                  // lanes 0, 2, ..., 14
    __m512i vo = rq(_mm512_mul_epi32(_mm512_srli_epi64(va, 32), _mm512_srli_epi64(vb, 32)));  // lanes 1, 3, ..., 15
    __m512i v = _mm512_add_epi32(_mm512_mask_blend_epi32(0xAAAA, ve, _mm512_slli_epi64(vo, 32)), vz);
    if (y_bytes == 1) _mm_storeu_si128(reinterpret_cast<__m128i*>(py + i), _mm512_cvtepi32_epi8(v));
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(py + 2 * i), _mm512_cvtepi32_epi16(v));
  }
  return i;
}

}  // namespace fixpoint::xk
