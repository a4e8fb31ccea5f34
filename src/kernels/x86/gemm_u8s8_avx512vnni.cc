// gemm_u8s8s32_avx512vnni: the broadcast form on B in quads (gemm_u8s8.h). Each register holds
// 16 outputs n of one row m; per group of four k, one load of B gives the four codes of 16
// outputs, a broadcast of A gives the row's four weights, and vpdpbusd multiplies unsigned bytes
// by signed bytes and adds each group of four into the int32 lanes (non-saturating): 64 products
// per instruction and no reduction across lanes. A 6 x 64 tile: 24 accumulators, 4 B registers
// and one broadcast in 29 of the 32 registers; the loops over the tile are unrolled by pragma:
// GCC 12 at -O3 left them rolled, kept the accumulator array on the stack and ran at half of
// vpdpbusd's rate (ResNet-18 int8 19 -> 12 ms on one thread). Compiled with -mavx512f -mavx512bw -mavx512vnni;
// only called when the CPU reports them.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "gemm_u8s8.h"

namespace {

using fixpoint::xk::GemmU8S8Args;


// Rows [m, m + MR) by outputs [n, n + 16 NV) of C; `Indirect`: group k/4 of B at g.Bq[k/4].
template <int MR, int NV, bool Indirect>
void block(const GemmU8S8Args& g, int64_t m, int64_t n) {
  __m512i c[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) c[i][v] = _mm512_setzero_si512();
  const int8_t* a = g.A + m * g.Kp;
  const int64_t quad_stride = g.N * 4;
  for (int64_t k = 0; k < g.Kp; k += 4) {
    const uint8_t* b = Indirect ? g.Bq[k >> 2] + n * 4 : g.B + (k >> 2) * quad_stride + n * 4;
    __m512i bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_si512(b + v * 64);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      int32_t w4;
      std::memcpy(&w4, a + i * g.Kp + k, 4);
      __m512i w = _mm512_set1_epi32(w4);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) c[i][v] = _mm512_dpbusd_epi32(c[i][v], bv[v], w);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm512_storeu_si512(g.C + (m + i) * g.ldm + n + v * 16, c[i][v]);
}

template <int MR, bool Indirect>
void rows(const GemmU8S8Args& g, int64_t m) {
  int64_t n = 0;
  for (; n + 64 <= g.N; n += 64) block<MR, 4, Indirect>(g, m, n);
  for (; n < g.N; n += 16) block<MR, 1, Indirect>(g, m, n);
}

// Rows six at a time, the rest in blocks of 4, 2 and 1 (a 64-row layer: 10 x 6 + 4).
template <bool Indirect>
void all_rows(const GemmU8S8Args& g) {
  int64_t m = 0;
  for (; m + 6 <= g.M; m += 6) rows<6, Indirect>(g, m);
  if (m + 4 <= g.M) rows<4, Indirect>(g, m), m += 4;
  if (m + 2 <= g.M) rows<2, Indirect>(g, m), m += 2;
  if (m < g.M) rows<1, Indirect>(g, m);
}

void run(const GemmU8S8Args& g) { g.Bq ? all_rows<true>(g) : all_rows<false>(g); }

}  // namespace

namespace fixpoint::xk {
const GemmU8S8Kernel kGemmU8S8Avx512Vnni{"gemm_u8s8s32_avx512vnni", "avx512vnni", 4, true, 16, run};
}
