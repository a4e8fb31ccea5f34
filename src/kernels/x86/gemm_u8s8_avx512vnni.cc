// gemm_u8s8s32_avx512vnni: the broadcast form on B in quads (gemm_u8s8.h). Each register holds
// 16 outputs n of one row m; per group of four k, one load of B gives the four codes of 16
// outputs, a broadcast of A gives the row's four weights, and vpdpbusd multiplies unsigned bytes
// by signed bytes and adds each group of four into the int32 lanes (non-saturating): 64 products
// per instruction and no reduction across lanes. A 6 x 64 tile: 24 accumulators, 4 B registers
// and one broadcast in 29 of the 32 registers. Compiled with -mavx512f -mavx512bw -mavx512vnni;
// only called when the CPU reports them.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "gemm_u8s8.h"

namespace {

using fixpoint::xk::GemmU8S8Args;

// Rows [m, m + MR) by outputs [n, n + 16 NV) of C.
template <int MR, int NV>
void block(const GemmU8S8Args& g, int64_t m, int64_t n) {
  __m512i c[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) c[i][v] = _mm512_setzero_si512();
  const int8_t* a = g.A + m * g.Kp;
  const uint8_t* b = g.B + n * 4;
  const int64_t quad_stride = g.N * 4;
  for (int64_t k = 0; k < g.Kp; k += 4, b += quad_stride) {
    __m512i bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_si512(b + v * 64);
    for (int i = 0; i < MR; ++i) {
      int32_t w4;
      std::memcpy(&w4, a + i * g.Kp + k, 4);
      __m512i w = _mm512_set1_epi32(w4);
      for (int v = 0; v < NV; ++v) c[i][v] = _mm512_dpbusd_epi32(c[i][v], bv[v], w);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) _mm512_storeu_si512(g.C + (m + i) * g.ldm + n + v * 16, c[i][v]);
}

template <int MR>
void rows(const GemmU8S8Args& g, int64_t m) {
  int64_t n = 0;
  for (; n + 64 <= g.N; n += 64) block<MR, 4>(g, m, n);
  for (; n < g.N; n += 16) block<MR, 1>(g, m, n);
}

void run(const GemmU8S8Args& g) {
  int64_t m = 0;
  for (; m + 6 <= g.M; m += 6) rows<6>(g, m);
  for (; m < g.M; ++m) rows<1>(g, m);
}

}  // namespace

namespace fixpoint::xk {
const GemmU8S8Kernel kGemmU8S8Avx512Vnni{"gemm_u8s8s32_avx512vnni", "avx512vnni", 4, true, 16, run};
}
