// f32 microkernels, AVX-512F + FMA: 16 lanes; the 6x32 GEMM tile keeps 12 accumulators in
// registers (two per row: enough independent chains for two FMA pipes of latency 4) and reads B
// panels 32 floats wide; the 12x32 pair tile (two weight panels) keeps 24 and loads each B row
// once for 24 FMAs instead of 12 (109 against 93 GMAC/s on one Zen 5 thread, in cache, same run).
// Compiled with -mavx512f -mfma; selected on CPUs of the avx512vnni ISA (fixpoint/cpu_isa.h),
// which all have AVX-512F. Same chains (F1) as the other tables.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "../reference/unary_ops.h"
#include "f32_kernels.h"

namespace {
#include "f32_kernels_impl.h"

struct Avx512 {
  using Reg = __m512;
  static constexpr int W = 16, NR = 32;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  // Lanes p[0], p[s], ..., p[15 s]; for s == 2 two loads and a two-source permute, reading
  // p[0..31] (the caller keeps p[31] inside the row).
  static Reg load_strided(const float* p, int64_t s) {
    if (s == 1) return _mm512_loadu_ps(p);
    if (s == 2) {
      const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      return _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16));
    }
    const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32(static_cast<int>(s)));
    return _mm512_i32gather_ps(idx, p, 4);
  }
  static Reg set1(float v) { return _mm512_set1_ps(v); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static void store(float* p, Reg r) { _mm512_storeu_ps(p, r); }
  static Reg relu(Reg r) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(r, zero(), _CMP_LT_OQ), r, zero()); }
  // The lanes of mask, packed to the front and stored to p .. p + popcount(mask) - 1.
  static void store_compressed(float* p, uint32_t mask, Reg r) {
    const auto n = static_cast<__mmask16>((1u << __builtin_popcount(mask)) - 1);
    _mm512_mask_storeu_ps(p, n, _mm512_maskz_compress_ps(static_cast<__mmask16>(mask), r));
  }
};

// (U1) of src/kernels/reference/unary_ops.h on 8 doubles (the floats of half a vector): the same
// operations in the same order, each rounded once as ref::tanh_f32 rounds it (fmadd / fnmadd
// are its std::fma, roundscale to nearest its nearbyint, scalef its ldexp by an integer).
__m256 tanh_half(__m256 xf) {
  using fixpoint::ref::kTanhExpm1;
  const __m512d a = _mm512_cvtps_pd(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), xf));
  const __m512d y = _mm512_add_pd(a, a);
  const __m512d n = _mm512_roundscale_pd(_mm512_mul_pd(y, _mm512_set1_pd(fixpoint::ref::kTanhInvLn2)),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512d r = _mm512_fnmadd_pd(n, _mm512_set1_pd(fixpoint::ref::kTanhLn2Hi), y);
  r = _mm512_fnmadd_pd(n, _mm512_set1_pd(fixpoint::ref::kTanhLn2Lo), r);
  __m512d p = _mm512_set1_pd(kTanhExpm1[0]);
  for (int i = 1; i < 11; ++i) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(kTanhExpm1[i]));
  const __m512d e = _mm512_mul_pd(p, r), s = _mm512_scalef_pd(_mm512_set1_pd(1.0), n);
  const __m512d t = _mm512_fmadd_pd(s, e, _mm512_sub_pd(s, _mm512_set1_pd(1.0)));
  return _mm512_cvtpd_ps(_mm512_div_pd(t, _mm512_add_pd(t, _mm512_set1_pd(2.0))));
}

void tanh_row_avx512(const float* x, float* y, int64_t n) {
  const __m512i sign = _mm512_set1_epi32(INT32_MIN);
  const __m512 one = _mm512_set1_ps(1.0f), tiny = _mm512_set1_ps(fixpoint::ref::kTanhTiny),
               big = _mm512_set1_ps(fixpoint::ref::kTanhOne);
  for (int64_t i = 0; i < n; i += 16) {
    const auto m = static_cast<__mmask16>(n - i >= 16 ? 0xffff : (1u << (n - i)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    const __m512d vd = _mm512_castps_pd(v);
    const __m256 lo = tanh_half(_mm256_castpd_ps(_mm512_castpd512_pd256(vd)));
    const __m256 hi = tanh_half(_mm256_castpd_ps(_mm512_extractf64x4_pd(vd, 1)));
    const __m512i vs = _mm512_and_si512(_mm512_castps_si512(v), sign);  // x's sign (the quotient is >= 0)
    __m512 t = _mm512_castsi512_ps(_mm512_or_si512(
        _mm512_castpd_si512(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1)), vs));
    const __m512 a = _mm512_abs_ps(v);
    // |x| >= 9.5 (or NaN): +-1; |x| < 2^-13 or NaN: x itself.
    t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, big, _CMP_NLT_UQ), t,
                             _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(one), vs)));
    t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, tiny, _CMP_LT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), t, v);
    _mm512_mask_storeu_ps(y + i, m, t);
  }
}

}  // namespace

namespace fixpoint::fk {
const F32Kernels kF32Avx512{"avx512", Avx512::NR, gemm_packed<Avx512>, gemm_indirect<Avx512>, gemm_indirect_pair<Avx512>, dwconv_plane<Avx512>, pointwise, tanh_row_avx512};
}
