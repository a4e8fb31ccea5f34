// The broadcast-form GEMMs of AVX-512 VNNI, over B in 32-bit words (four u8 codes, or two int16
// values, of consecutive k for one output n):
//   gemm_u8s8s32_avx512vnni  (gemm_u8s8.h, quads): vpdpbusd multiplies unsigned bytes by signed
//     bytes and adds each group of four into the int32 lanes: 64 products per instruction;
//   gemm_s16pairs_s32_avx512vnni (gemm_s16.h, pairs): vpdpwssd multiplies int16 pairs and adds
//     each pair: 32 products per instruction.
// Both non-saturating, no reduction across lanes. Each register holds 16 outputs n of one row m;
// per word of k, one load of B gives 16 outputs' words, a broadcast of A gives the row's word,
// and one instruction accumulates. A 6 x 64 tile: 24 accumulators, 4 B registers and one
// broadcast in 29 of the 32 registers; the loops over the tile are unrolled by pragma: GCC 12
// at -O3 left them rolled, kept the accumulator array on the stack and ran at half of
// vpdpbusd's rate (ResNet-18 int8 19 -> 12 ms on one thread). The loops over k are unrolled
// twice as well (session 40): the counter, pointer and branch of each step had shared ports with
// the vpdpbusd; ResNet-18 int8 without AMX 7.9-8.3 -> 7.1-7.8 ms at one thread (alternating
// processes, same bytes). Compiled with -mavx512f -mavx512bw -mavx512vnni; only called when the
// CPU reports them.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "gemm_s16.h"
#include "gemm_u8s8.h"

namespace {

using fixpoint::xk::GemmPairsArgs;
using fixpoint::xk::GemmU8S8Args;
using fixpoint::xk::GemmU8S8PixelArgs;

struct Quads {  // A: int8, four k per word; B direct (quad rows) or through Bq
  using Args = GemmU8S8Args;
  using AElem = int8_t;
  static constexpr int kPerWord = 4;
  static __m512i dot(__m512i c, __m512i b, __m512i a) { return _mm512_dpbusd_epi32(c, b, a); }
  static const char* b_word(const Args& g, int64_t k, int64_t n) {
    const uint8_t* p = g.Bq ? g.Bq[k >> 2] : g.B + (k >> 2) * g.N * 4;
    return reinterpret_cast<const char*>(p + n * 4);
  }
};

struct Pairs {  // A: int16, two k per word; B through Bq
  using Args = GemmPairsArgs;
  using AElem = int16_t;
  static constexpr int kPerWord = 2;
  static __m512i dot(__m512i c, __m512i b, __m512i a) { return _mm512_dpwssd_epi32(c, b, a); }
  static const char* b_word(const Args& g, int64_t k, int64_t n) {
    return reinterpret_cast<const char*>(g.Bq[k >> 1] + n * 2);
  }
};

// With PF, the B words kPrefetchWords ahead are prefetched (GemmPairsArgs::prefetch_b,
// GemmU8S8Args::prefetch_b).
constexpr int64_t kPrefetchWords = 16;

// Rows [m, m + MR) by outputs [n, n + 16 NV) of C.
template <class P, int MR, int NV, bool PF>
void block(const typename P::Args& g, int64_t m, int64_t n) {
  __m512i c[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) c[i][v] = _mm512_setzero_si512();
  const typename P::AElem* a = g.A + m * g.Kp;
#pragma GCC unroll 2
  for (int64_t k = 0; k < g.Kp; k += P::kPerWord) {
    const char* b = P::b_word(g, k, n);
    if constexpr (PF) {
      const char* pf = P::b_word(g, std::min<int64_t>(k + kPrefetchWords * P::kPerWord, g.Kp - P::kPerWord), n);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) __builtin_prefetch(pf + v * 64);
    }
    __m512i bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_si512(b + v * 64);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      int32_t word;
      std::memcpy(&word, a + i * g.Kp + k, 4);
      __m512i w = _mm512_set1_epi32(word);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) c[i][v] = P::dot(c[i][v], bv[v], w);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm512_storeu_si512(g.C + (m + i) * g.ldm + n + v * 16, c[i][v]);
}

// Outputs 64 at a time, then the last 16, 32 or 48 in one block: a 6 x 16 block loads one B
// register per six dot products and ran ResNet-18's 14 x 14 layers' last 32 positions (a
// quarter of their work) at about half the rate of the 6 x 64 tile.
template <class P, int MR, bool PF>
void rows(const typename P::Args& g, int64_t m) {
  int64_t n = 0;
  for (; n + 64 <= g.N; n += 64) block<P, MR, 4, PF>(g, m, n);
  switch ((g.N - n) / 16) {
    case 3: block<P, MR, 3, PF>(g, m, n); break;
    case 2: block<P, MR, 2, PF>(g, m, n); break;
    case 1: block<P, MR, 1, PF>(g, m, n); break;
    default: break;
  }
}

// Rows six at a time, the rest in blocks of 4, 2 and 1 (a 64-row layer: 10 x 6 + 4).
template <class P, bool PF = false>
void all_rows(const typename P::Args& g) {
  int64_t m = 0;
  for (; m + 6 <= g.M; m += 6) rows<P, 6, PF>(g, m);
  if (m + 4 <= g.M) rows<P, 4, PF>(g, m), m += 4;
  if (m + 2 <= g.M) rows<P, 2, PF>(g, m), m += 2;
  if (m < g.M) rows<P, 1, PF>(g, m);
}

void run_quads(const GemmU8S8Args& g) { g.prefetch_b ? all_rows<Quads, true>(g) : all_rows<Quads>(g); }

// The pixel form (gemm_u8s8.h): NP positions by 16 NV rows, the registers transposed from the
// 6 x 64 tile above: each accumulator holds 16 rows of one position; per word of k, NV loads of
// A (the block's rows, contiguous) and one broadcast of each position's word. NP NV = 24
// accumulators (6 x 4, 8 x 3, 12 x 2, 24 x 1), NV A registers and a broadcast. Each register is
// stored whole: the sums are position-major. With PF, the steps k < pf_lines each prefetch line k
// of pf into L2 (pixel_tile_at).
template <int NP, int NV, bool PF>
void pixel_tile(const GemmU8S8PixelArgs& g, const int8_t* a, const int64_t* off, int32_t* C, const int8_t* pf,
                int64_t pf_lines) {
  __m512i c[NP][NV];
#pragma GCC unroll 24
  for (int j = 0; j < NP; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) c[j][v] = _mm512_setzero_si512();
  int64_t o[NP];
#pragma GCC unroll 24
  for (int j = 0; j < NP; ++j) o[j] = off[j];
#pragma GCC unroll 2
  for (int64_t k = 0; k < g.Kq; ++k) {
    if constexpr (PF)
      if (k < pf_lines) _mm_prefetch(pf + k * 64, _MM_HINT_T1);
    const uint8_t* b = g.Bq[k];
    __m512i w[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) w[v] = _mm512_loadu_si512(a + (k * NV + v) * 64);
#pragma GCC unroll 24
    for (int j = 0; j < NP; ++j) {
      int32_t word;
      std::memcpy(&word, b + o[j], 4);
      __m512i x = _mm512_set1_epi32(word);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) c[j][v] = _mm512_dpbusd_epi32(c[j][v], x, w[v]);
    }
  }
#pragma GCC unroll 24
  for (int j = 0; j < NP; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm512_storeu_si512(C + j * g.ldc + v * 16, c[j][v]);
}

// Tile t of a block prefetches lines [t Kq, (t + 1) Kq) of g.prefetch, one a step of k: the
// first tiles of a block bring the next block's weights into L2 while this block's are read
// from L1 and L2. ResNet-18's 7 x 7 layers (295 KB of weights a block, 2.4 MB a layer: more
// than L2) had otherwise waited on memory at each block's first tile: their five convs took
// 2.76-2.97 ms in the network at one thread against 2.36-2.63 with the prefetch (session 41,
// docs/performance.md).
template <int NP, int NV>
void pixel_tile_at(const GemmU8S8PixelArgs& g, const int8_t* a, int64_t j, int64_t t, int32_t* C) {
  const int64_t lines = (g.prefetch_bytes + 63) / 64 - t * g.Kq;
  if (lines > 0)
    pixel_tile<NP, NV, true>(g, a, g.off + j, C + j * g.ldc, g.prefetch + t * g.Kq * 64, lines);
  else
    pixel_tile<NP, NV, false>(g, a, g.off + j, C + j * g.ldc, nullptr, 0);
}

template <int NV>
void pixel_rows(const GemmU8S8PixelArgs& g, const int8_t* a, int32_t* C) {
  constexpr int NP = static_cast<int>(fixpoint::xk::pixel_tile_positions(16 * NV));
  int64_t j = 0, t = 0;
  for (; j + NP <= g.n; j += NP, ++t) pixel_tile_at<NP, NV>(g, a, j, t, C);
  for (; j + 6 <= g.n; j += 6, ++t) pixel_tile_at<6, NV>(g, a, j, t, C);
  switch (g.n - j) {
    case 5: pixel_tile_at<5, NV>(g, a, j, t, C); break;
    case 4: pixel_tile_at<4, NV>(g, a, j, t, C); break;
    case 3: pixel_tile_at<3, NV>(g, a, j, t, C); break;
    case 2: pixel_tile_at<2, NV>(g, a, j, t, C); break;
    case 1: pixel_tile_at<1, NV>(g, a, j, t, C); break;
    default: break;
  }
}

// Blocks of 64 rows (the last one 16, 32 or 48), each over every position: a block's rows of A
// are read once per six positions.
void run_pixels(const GemmU8S8PixelArgs& g) {
  for (int64_t m = 0; m < g.M; m += 64) {
    const int8_t* a = g.A + m * g.Kq * 4;
    int32_t* C = g.C + m;
    switch (std::min<int64_t>(4, (g.M - m) / 16)) {
      case 4: pixel_rows<4>(g, a, C); break;
      case 3: pixel_rows<3>(g, a, C); break;
      case 2: pixel_rows<2>(g, a, C); break;
      case 1: pixel_rows<1>(g, a, C); break;
      default: break;
    }
  }
}
void run_pairs(const GemmPairsArgs& g) { g.prefetch_b ? all_rows<Pairs, true>(g) : all_rows<Pairs>(g); }

}  // namespace

namespace fixpoint::xk {
const GemmU8S8Kernel kGemmU8S8Avx512Vnni{"gemm_u8s8s32_avx512vnni", "avx512vnni", 4, true, 16, run_quads,
                                         run_pixels, "gemm_u8s8s32_6px64c_avx512vnni"};
const GemmPairsKernel kGemmS16PairsAvx512Vnni{"gemm_s16pairs_s32_avx512vnni", "avx512vnni", 16, run_pairs};
}
