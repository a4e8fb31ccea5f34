// requant_store_s32_avx512 / _rows_ / _channels_ (requant.h): (13) on sixteen int32 sums per step
// and the store of the codes, 8- or 16-bit: the GEMM paths' epilogue in one pass, the last
// partial step masked.
// Compiled with -mavx512f -mavx512bw -mavx512vl (byte and word masked stores); only called on
// CPUs of the avx512vnni ISA, which have them.
//
// a · m (|a| < 2^31, 0 < m < 2^31: |a · m| < 2^62) in 64-bit lanes (vpmuldq on the even and on
// the odd 32-bit lanes), RSH(p, n) = (p + 2^(n-1)) >> n by the arithmetic 64-bit shift (4) (no
// overflow: |p| + 2^61 < 2^63), clamped to [lo - z, hi - z] in 64 bits, so the low 32 bits of each
// lane are the value; z is added after the clamp (nothing wraps) and the codes, now within the
// output type's range, are stored truncated (vpmovdb / vpmovdw). A step where bias + sum leaves
// int32 ends the run: the codes before it are stored, and the count of them returned.
#include <immintrin.h>

#include <algorithm>

#include "requant.h"

namespace fixpoint::xk {

namespace {

// (13) and the store of `count` sums of one channel; with Check, stops before the first step of
// sixteen where bias + sum leaves int32 and returns how many codes it stored. With High (n >= 32):
// RSH(p, n) = floor((p + 2^(n-1)) / 2^32) >> (n - 32) (floor division in two steps), the first
// step the high 32 bits of each 64-bit lane, so the shift and the clamp run on sixteen 32-bit
// lanes instead of twice eight 64-bit ones (the result within int32: |p| < 2^62).
template <bool Check, bool High>
inline int64_t store_row(const int32_t* sum, int64_t count, int32_t bias, int64_t m, int n, int32_t lo_z, int32_t hi_z,
                         int32_t z, void* out, int out_bytes) {
  const __m512i vb = _mm512_set1_epi32(bias), vm = _mm512_set1_epi64(m);
  const __m512i half = _mm512_set1_epi64(int64_t{1} << (n - 1));
  const __m128i cnt = _mm_cvtsi32_si128(High ? n - 32 : n);
  const __m512i lo = _mm512_set1_epi64(lo_z), hi = _mm512_set1_epi64(hi_z), vz = _mm512_set1_epi32(z);
  const __m512i lo32 = _mm512_set1_epi32(lo_z), hi32 = _mm512_set1_epi32(hi_z);
  auto rq = [&](__m512i p) {
    return _mm512_min_epi64(_mm512_max_epi64(_mm512_sra_epi64(_mm512_add_epi64(p, half), cnt), lo), hi);
  };
  for (int64_t i = 0; i < count; i += 16) {
    // The last step's lanes past count are neither read nor written (masked load and store).
    const __mmask16 k = count - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (count - i)) - 1);
    const __m512i s = _mm512_maskz_loadu_epi32(k, sum + i);
    __m512i a = _mm512_add_epi32(s, vb);
    // bias + sum left int32 in a lane (a wide layer's row may): signs of both operands differ
    // from the wrapped sum's. Those lanes and the rest are the caller's.
    if (Check &&
        _mm512_cmplt_epi32_mask(_mm512_and_si512(_mm512_xor_si512(a, s), _mm512_xor_si512(a, vb)), _mm512_setzero_si512()))
      return i;
    __m512i v;
    if constexpr (High) {
      const __m512i e = _mm512_add_epi64(_mm512_mul_epi32(a, vm), half);                         // lanes 0, 2, ..
      const __m512i o = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), vm), half);  // lanes 1, 3, ..
      v = _mm512_sra_epi32(_mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(e, 32), o), cnt);
      v = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(v, lo32), hi32), vz);
    } else {
      __m512i ve = rq(_mm512_mul_epi32(a, vm));                         // lanes 0, 2, ..., 14
      __m512i vo = rq(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), vm));  // lanes 1, 3, ..., 15
      v = _mm512_add_epi32(_mm512_mask_blend_epi32(0xAAAA, ve, _mm512_slli_epi64(vo, 32)), vz);
    }
    if (out_bytes == 1)
      _mm_mask_storeu_epi8(static_cast<char*>(out) + i, k, _mm512_cvtepi32_epi8(v));
    else
      _mm256_mask_storeu_epi16(static_cast<char*>(out) + 2 * i, k, _mm512_cvtepi32_epi16(v));
  }
  return count;
}

template <bool Check>
inline int64_t store_row_any(const int32_t* sum, int64_t count, int32_t bias, int64_t m, int n, int32_t lo_z,
                             int32_t hi_z, int32_t z, void* out, int out_bytes) {
  return n >= 32 ? store_row<Check, true>(sum, count, bias, m, n, lo_z, hi_z, z, out, out_bytes)
                 : store_row<Check, false>(sum, count, bias, m, n, lo_z, hi_z, z, out, out_bytes);
}

// The per-lane constants of sixteen channels j .. j + 15 and (13) of sixteen sums of them: even
// lanes' constants in the low halves of 64-bit lanes, odd lanes' shifted down; lanes past the
// mask read no constant, and a masked lane's n of 0 makes its (unused) half 2^-1 = 0 and its
// shift 0.
struct LaneRequant {
  __m512i vb, m_e, m_o, n_e, n_o, h_e, h_o, lo, hi, vz;
  LaneRequant(__mmask16 k, const int32_t* bias, const int32_t* m, const int32_t* n, int32_t lo_z, int32_t hi_z, int32_t z)
      : lo(_mm512_set1_epi64(lo_z)), hi(_mm512_set1_epi64(hi_z)), vz(_mm512_set1_epi32(z)) {
    const __m512i one = _mm512_set1_epi64(1), vm = _mm512_maskz_loadu_epi32(k, m), vn = _mm512_maskz_loadu_epi32(k, n);
    vb = _mm512_maskz_loadu_epi32(k, bias);
    m_e = vm;
    m_o = _mm512_srli_epi64(vm, 32);
    n_e = _mm512_and_si512(vn, _mm512_set1_epi64(0xFFFFFFFF));
    n_o = _mm512_srli_epi64(vn, 32);
    h_e = _mm512_srlv_epi64(_mm512_sllv_epi64(one, n_e), one);
    h_o = _mm512_srlv_epi64(_mm512_sllv_epi64(one, n_o), one);
  }
  __m512i operator()(__m512i s) const {
    __m512i a = _mm512_add_epi32(s, vb);
    __m512i ve = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(a, m_e), h_e), n_e);
    __m512i vo = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), m_o), h_o), n_o);
    ve = _mm512_min_epi64(_mm512_max_epi64(ve, lo), hi);
    vo = _mm512_min_epi64(_mm512_max_epi64(vo, lo), hi);
    return _mm512_add_epi32(_mm512_mask_blend_epi32(0xAAAA, ve, _mm512_slli_epi64(vo, 32)), vz);
  }
};

}  // namespace

int64_t requant_store_s32_avx512(const int32_t* sum, int64_t count, int32_t bias, int64_t m, int n, int32_t lo_z,
                                 int32_t hi_z, int32_t z, void* out, int out_bytes) {
  return store_row_any<true>(sum, count, bias, m, n, lo_z, hi_z, z, out, out_bytes);
}

void requant_rows_s32_avx512(const int32_t* sum, int64_t lds, int64_t nj, int64_t ni, const int32_t* bias,
                             const int32_t* m, const int32_t* n, int32_t lo_z, int32_t hi_z, int32_t z, void* out,
                             int64_t ldo, int out_bytes) {
  for (int64_t j = 0; j < nj; ++j)
    store_row_any<false>(sum + j * lds, ni, bias[j], m[j], n[j], lo_z, hi_z, z,
                         static_cast<char*>(out) + j * ldo * out_bytes, out_bytes);
}

namespace {
// Transposes R rows of R elements of E bytes (R = 16 bytes / E, one row a register) in place:
// each stage interleaves rows i and i + R/2, which rotates the bits of the (row, column) index
// left by one; log2 R stages rotate them by half their width, row and column swapped.
template <int E>
inline void transpose_rows(__m128i* x) {
  constexpr int R = 16 / E;
  for (int stage = 1; stage < R; stage *= 2) {
    __m128i t[R];
    for (int i = 0; i < R / 2; ++i) {
      if constexpr (E == 1) {
        t[2 * i] = _mm_unpacklo_epi8(x[i], x[i + R / 2]);
        t[2 * i + 1] = _mm_unpackhi_epi8(x[i], x[i + R / 2]);
      } else {
        t[2 * i] = _mm_unpacklo_epi16(x[i], x[i + R / 2]);
        t[2 * i + 1] = _mm_unpackhi_epi16(x[i], x[i + R / 2]);
      }
    }
    for (int i = 0; i < R; ++i) x[i] = t[i];
  }
}

// (13) of int64 sums for a product of up to 94 bits without 128-bit lanes: with a = ah 2^32 + al
// (ah signed, |ah| < 2^31; 0 <= al < 2^32), a m = P1 2^32 + P0 for P1 = ah m (vpmuldq,
// |P1| < 2^62) and P0 = al m (vpmuludq, 0 <= P0 < 2^63). With H = P1 + floor(P0 / 2^32) and
// L = P0 mod 2^32, a m + 2^(n-1) = (H + 2^(k-1)) 2^32 + L for k = n - 32 >= 1, and since
// 0 <= L < 2^32,
//   RSH(a m, n) = floor((a m + 2^(n-1)) / 2^n) = floor((H + 2^(k-1)) / 2^k)   (4)
// an arithmetic shift of a value below 2^63 for k <= 61. The result is below 2^61, so the clamp
// to [lo - z, hi - z] and + z are exact in int64, as in fx::requantize_wide. The constants of
// eight channels in the 64-bit lanes (lanes past the mask: m = 0, n = 33), or of one channel in
// every lane.
struct LaneRequant64 {
  __m512i vb, vm, vk, half, lo, hi, vz;
  LaneRequant64(__mmask8 k, const int64_t* bias, const int64_t* m, const int64_t* n, int64_t lo_z, int64_t hi_z, int64_t z)
      : LaneRequant64(_mm512_maskz_loadu_epi64(k, bias), _mm512_maskz_loadu_epi64(k, m),
                      _mm512_mask_loadu_epi64(_mm512_set1_epi64(33), k, n), lo_z, hi_z, z) {}
  LaneRequant64(__m512i bias, __m512i m, __m512i n, int64_t lo_z, int64_t hi_z, int64_t z)
      : vb(bias), vm(m), vk(_mm512_sub_epi64(n, _mm512_set1_epi64(32))),
        half(_mm512_sllv_epi64(_mm512_set1_epi64(1), _mm512_sub_epi64(vk, _mm512_set1_epi64(1)))),
        lo(_mm512_set1_epi64(lo_z)), hi(_mm512_set1_epi64(hi_z)), vz(_mm512_set1_epi64(z)) {}
  __m512i operator()(__m512i s) const {
    const __m512i a = _mm512_add_epi64(s, vb);
    const __m512i p1 = _mm512_mul_epi32(_mm512_srai_epi64(a, 32), vm);  // ah m
    const __m512i p0 = _mm512_mul_epu32(a, vm);                          // al m
    const __m512i h = _mm512_add_epi64(p1, _mm512_srli_epi64(p0, 32));
    const __m512i v = _mm512_srav_epi64(_mm512_add_epi64(h, half), vk);
    return _mm512_add_epi64(_mm512_min_epi64(_mm512_max_epi64(v, lo), hi), vz);
  }
};

// Channel-major codes from position-major rows: per block of sixteen channels j (mask k),
// row = make(j, k), and row(p) the sixteen channels' codes of position p in int32 lanes; blocks of
// 16 (8-bit codes) or 8 (16-bit) positions are transposed in registers, one store a channel
// (masked past nj and ni).
template <class Make>
void store_transposed(int64_t nj, int64_t ni, void* out, int64_t ldo, int out_bytes, Make make) {
  const int R = out_bytes == 1 ? 16 : 8;
  for (int64_t j = 0; j < nj; j += 16) {
    const int64_t cj = std::min<int64_t>(16, nj - j);
    const __mmask16 k = static_cast<__mmask16>(cj == 16 ? 0xFFFF : (1u << cj) - 1);
    const auto row = make(j, k);
    for (int64_t i = 0; i < ni; i += R) {
      const int64_t ci = std::min<int64_t>(R, ni - i);
      __m128i x[16], y[16];  // x: positions (8-bit: 16 channels' codes; 16-bit: channels 0-7), y: channels 8-15
      for (int r = 0; r < R; ++r) {
        __m512i v = r >= ci ? _mm512_setzero_si512() : row(i + r);
        if (out_bytes == 1) {
          x[r] = _mm512_cvtepi32_epi8(v);
        } else {
          __m256i w = _mm512_cvtepi32_epi16(v);
          x[r] = _mm256_castsi256_si128(w);
          y[r] = _mm256_extracti128_si256(w, 1);
        }
      }
      if (out_bytes == 1) {
        transpose_rows<1>(x);
        // Whole rows of sixteen codes unmasked (a masked store costs several plain ones on Zen 4).
        const __mmask16 kp = static_cast<__mmask16>(ci == 16 ? 0xFFFF : (1u << ci) - 1);
        char* o = static_cast<char*>(out) + (j * ldo + i);
        if (ci == 16)
          for (int64_t c = 0; c < cj; ++c) _mm_storeu_si128(reinterpret_cast<__m128i*>(o + c * ldo), x[c]);
        else
          for (int64_t c = 0; c < cj; ++c) _mm_mask_storeu_epi8(o + c * ldo, kp, x[c]);
      } else {
        transpose_rows<2>(x);
        transpose_rows<2>(y);
        const __mmask8 kp = static_cast<__mmask8>((1u << ci) - 1);
        char* o = static_cast<char*>(out) + 2 * (j * ldo + i);
        for (int64_t c = 0; c < cj; ++c) {
          if (ci == 8)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 2 * c * ldo), c < 8 ? x[c] : y[c - 8]);
          else
            _mm_mask_storeu_epi16(o + 2 * c * ldo, kp, c < 8 ? x[c] : y[c - 8]);
        }
      }
    }
  }
}
}  // namespace

void requant_transposed_s32_avx512(const int32_t* sum, int64_t lds, int64_t nj, int64_t ni, const int32_t* bias,
                                   const int32_t* m, const int32_t* n, int32_t lo_z, int32_t hi_z, int32_t z,
                                   void* out, int64_t ldo, int out_bytes) {
  store_transposed(nj, ni, out, ldo, out_bytes, [&](int64_t j, __mmask16 k) {
    const bool whole = k == 0xFFFF;
    return [rq = LaneRequant(k, bias + j, m + j, n + j, lo_z, hi_z, z), src = sum + j, lds, k, whole](int64_t p) {
      return rq(whole ? _mm512_loadu_si512(src + p * lds) : _mm512_maskz_loadu_epi32(k, src + p * lds));
    };
  });
}

void requant_transposed_planes_s32_avx512(const int32_t* hi, const int32_t* lo, int64_t lds, int64_t nj, int64_t ni,
                                          const int32_t* bias, const int32_t* m, const int32_t* n, int32_t lo_z,
                                          int32_t hi_z, int32_t z, void* out, int64_t ldo, int out_bytes) {
  store_transposed(nj, ni, out, ldo, out_bytes, [&](int64_t j, __mmask16 k) {
    return [rq = LaneRequant(k, bias + j, m + j, n + j, lo_z, hi_z, z), h = hi + j, l = lo + j, lds, k](int64_t p) {
      return rq(_mm512_add_epi32(_mm512_slli_epi32(_mm512_maskz_loadu_epi32(k, h + p * lds), 8),
                                 _mm512_maskz_loadu_epi32(k, l + p * lds)));  // 2^8 hi + lo, mod 2^32
    };
  });
}

int64_t requant_row_s64_avx512(int64_t* sum, int64_t count, int64_t bias, int64_t m, int n, int64_t lo_z, int64_t hi_z,
                               int64_t z) {
  const LaneRequant64 rq(_mm512_set1_epi64(bias), _mm512_set1_epi64(m), _mm512_set1_epi64(n), lo_z, hi_z, z);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) _mm512_storeu_si512(sum + i, rq(_mm512_loadu_si512(sum + i)));
  return i;
}

void requant_transposed_planes_avx512(const int32_t* hi, const int32_t* lo, int64_t lds, int64_t nj, int64_t ni,
                                      const int64_t* bias, const int64_t* m, const int64_t* n, int64_t lo_z,
                                      int64_t hi_z, int64_t z, void* out, int64_t ldo, int out_bytes) {
  store_transposed(nj, ni, out, ldo, out_bytes, [&](int64_t j, __mmask16 k) {
    const auto k0 = static_cast<__mmask8>(k), k1 = static_cast<__mmask8>(k >> 8);
    return [r0 = LaneRequant64(k0, bias + j, m + j, n + j, lo_z, hi_z, z),
            r1 = LaneRequant64(k1, bias + j + 8, m + j + 8, n + j + 8, lo_z, hi_z, z), h = hi + j, l = lo + j, lds,
            k](int64_t p) {
      const __m512i vh = _mm512_maskz_loadu_epi32(k, h + p * lds), vl = _mm512_maskz_loadu_epi32(k, l + p * lds);
      auto wide = [](__m256i a, __m256i b) {  // 2^8 a + b in int64 lanes
        return _mm512_add_epi64(_mm512_slli_epi64(_mm512_cvtepi32_epi64(a), 8), _mm512_cvtepi32_epi64(b));
      };
      const __m512i c0 = r0(wide(_mm512_castsi512_si256(vh), _mm512_castsi512_si256(vl)));
      const __m512i c1 = r1(wide(_mm512_extracti64x4_epi64(vh, 1), _mm512_extracti64x4_epi64(vl, 1)));
      return _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(c0)), _mm512_cvtepi64_epi32(c1), 1);
    };
  });
}

void requant_channels_s32_avx512(const int32_t* sum, int64_t lds, int64_t nj, int64_t ni, const int32_t* bias,
                                 const int32_t* m, const int32_t* n, int32_t lo_z, int32_t hi_z, int32_t z, void* out,
                                 int64_t ldo, int out_bytes) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int64_t j = 0; j < nj; j += 16) {
    // Lanes past nj are masked: neither their constants nor their sums are read, nothing stored.
    const __mmask16 k = nj - j >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (nj - j)) - 1);
    const LaneRequant rq(k, bias + j, m + j, n + j, lo_z, hi_z, z);
    const __m512i idx = _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int32_t>(lds)));
    const int32_t* col = sum + j * lds;
    char* o = static_cast<char*>(out) + j * out_bytes;
    for (int64_t i = 0; i < ni; ++i, o += ldo * out_bytes) {
      __m512i v = rq(_mm512_mask_i32gather_epi32(_mm512_setzero_si512(), k, idx, col + i, 4));
      if (out_bytes == 1)
        _mm_mask_storeu_epi8(o, k, _mm512_cvtepi32_epi8(v));
      else
        _mm256_mask_storeu_epi16(o, k, _mm512_cvtepi32_epi16(v));
    }
  }
}

}  // namespace fixpoint::xk
