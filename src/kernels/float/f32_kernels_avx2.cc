// f32 microkernels, AVX2 + FMA: 8 lanes; the 6x16 GEMM tile keeps 12 accumulators in registers.
// Compiled with -mavx2 -mfma; only called when the CPU reports both.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "../reference/unary_ops.h"
#include "f32_kernels.h"

namespace {
#include "f32_kernels_impl.h"

struct Avx2 {
  using Reg = __m256;
  static constexpr int W = 8, NR = 16;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  // Lanes p[0], p[s], ..., p[7s]; for s == 2 two loads and a shuffle, reading p[0..15] (the
  // caller keeps p[15] inside the row).
  static Reg load_strided(const float* p, int64_t s) {
    if (s == 1) return _mm256_loadu_ps(p);
    if (s == 2) {
      __m256 t = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
      return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
    }
    return _mm256_set_ps(p[7 * s], p[6 * s], p[5 * s], p[4 * s], p[3 * s], p[2 * s], p[s], p[0]);
  }
  static Reg set1(float v) { return _mm256_set1_ps(v); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static void store(float* p, Reg r) { _mm256_storeu_ps(p, r); }
  static Reg relu(Reg r) { return _mm256_blendv_ps(r, zero(), _mm256_cmp_ps(r, zero(), _CMP_LT_OQ)); }
};

}  // namespace

namespace fixpoint::fk {
const F32Kernels kF32Avx2{"avx2", Avx2::NR, gemm_packed<Avx2>, gemm_indirect<Avx2>, gemm_indirect_pair_as_two<Avx2>, dwconv_plane<Avx2>, pointwise, tanh_row};
}
