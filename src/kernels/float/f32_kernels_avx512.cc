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

}  // namespace

namespace fixpoint::fk {
const F32Kernels kF32Avx512{"avx512", Avx512::NR, gemm_packed<Avx512>, gemm_indirect<Avx512>, gemm_indirect_pair<Avx512>, dwconv_plane<Avx512>, pointwise};
}
