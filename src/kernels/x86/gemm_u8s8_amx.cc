// The u8 x s8 quads GEMM on AMX tiles (gemm_u8s8.h, kGemmU8S8Amx): C = A B in 16 x 16 int32
// tiles, TDPBSUD taking 16 x 16 x 64 products an instruction (vpdpbusd: 16 x 4); and u8 x u8
// (kGemmU8U8Amx, TDPBUUD) for the low bytes of 16-bit weights. Compiled
// with -mamx-tile -mamx-int8; run only where cpu_has_amx_int8() (the OS granted the tile state).
//
// The operands as the tiles want them:
// * A (weights, signed): a tile is 16 output channels by 64 bytes of k; pack_conv_amx stores, per
//   block of 16 rows, per tap, per block of 16 channel quads, that 16 x 64 tile (1 KB).
// * B (activations, unsigned): a tile is 16 k-quads by 16 positions x 4 bytes. With one tap fixed,
//   the quads of channel quads q, q + 1, ... are the same positions of consecutive quad planes, a
//   plane apart (WordPlanes::k_off = tap + q plane): so a tile is 16 rows of 64 bytes, one per
//   plane, at the stride Bq[taps] - Bq[0], read straight from the planes (no copy).
// The sums are the exact int32 sums of the other quads kernels (any order: same bits).
#include <immintrin.h>

#include <cstring>

#include "gemm_u8s8.h"

namespace fixpoint::xk {
namespace {

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved0[14] = {};
  uint16_t colsb[16] = {};  // bytes per row of each tile
  uint8_t rows[16] = {};
};

// C += A B on tiles: A's bytes signed (TDPBSUD) or, kUnsigned, unsigned (TDPBUUD: the low bytes of
// 16-bit weights). (A macro: the intrinsics take the tile numbers as literals.)
#define FIXPOINT_AMX_DOT(C, A, B)   \
  if constexpr (kUnsigned) {        \
    _tile_dpbuud(C, A, B);          \
  } else {                          \
    _tile_dpbsud(C, A, B);          \
  }

// Tiles 0-3: C (MT x NT of them), 4-5: A of the two row blocks, 6-7: B of the two position blocks.
template <bool kUnsigned, int MT, int NT>
void tile_block(const GemmU8S8Args& g, int64_t m0, int64_t n0, int64_t CB, size_t bstride) {
  const int64_t tile_rows_bytes = 16 * g.Kp;  // one block of 16 rows of A (pack_conv_amx)
  _tile_zero(0);
  if constexpr (NT == 2) _tile_zero(1);
  if constexpr (MT == 2) _tile_zero(2);
  if constexpr (MT == 2 && NT == 2) _tile_zero(3);
  const int8_t* a = g.A + m0 * g.Kp;
  // Tiles are not renamed: a load waits for the products still reading its tile. Ordered so that
  // each load's wait overlaps products on other tiles (A0, B0, B1, then A1 after the first two).
  for (int64_t kk = 0; kk < g.taps; ++kk)
    for (int64_t cb = 0; cb < CB; ++cb, a += 1024) {
      const uint8_t* b = g.Bq[cb * 16 * g.taps + kk] + n0 * 4;
      _tile_loadd(4, a, 64);
      _tile_loadd(6, b, bstride);
      FIXPOINT_AMX_DOT(0, 4, 6)
      if constexpr (NT == 2) {
        _tile_loadd(7, b + 64, bstride);
        FIXPOINT_AMX_DOT(1, 4, 7)
      }
      if constexpr (MT == 2) {
        _tile_loadd(5, a + tile_rows_bytes, 64);
        FIXPOINT_AMX_DOT(2, 5, 6)
        if constexpr (NT == 2) {
          FIXPOINT_AMX_DOT(3, 5, 7)
        }
      }
    }
  int32_t* c = g.C + m0 * g.ldm + n0;
  const size_t ldc = static_cast<size_t>(g.ldm) * 4;
  _tile_stored(0, c, ldc);
  if constexpr (NT == 2) _tile_stored(1, c + 16, ldc);
  if constexpr (MT == 2) _tile_stored(2, c + 16 * g.ldm, ldc);
  if constexpr (MT == 2 && NT == 2) _tile_stored(3, c + 16 * g.ldm + 16, ldc);
}

// C: whole tiles of 16 rows (M rounded up), N a multiple of 16, ldn = 1 (gemm_u8s8.h).
template <bool kUnsigned>
void run_amx(const GemmU8S8Args& g) {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);
  const int64_t CB = g.Kp / 64 / g.taps;  // blocks of 16 channel quads
  const auto bstride = static_cast<size_t>(g.quad_stride);
  for (int64_t m0 = 0; m0 < g.M; m0 += 32) {
    const bool m2 = g.M - m0 > 16;
    for (int64_t n0 = 0; n0 < g.N; n0 += 32) {
      const bool n2 = g.N - n0 >= 32;
      if (m2 && n2) tile_block<kUnsigned, 2, 2>(g, m0, n0, CB, bstride);
      else if (m2) tile_block<kUnsigned, 2, 1>(g, m0, n0, CB, bstride);
      else if (n2) tile_block<kUnsigned, 1, 2>(g, m0, n0, CB, bstride);
      else tile_block<kUnsigned, 1, 1>(g, m0, n0, CB, bstride);
    }
  }
  _tile_release();
}

}  // namespace

// Tiles 0-3: C of the channel blocks, 4: A (sixteen positions x R bytes), 5-7: B, in turn.
void conv_rows_amx(const AmxRowsArgs& g) {
  TileConfig cfg;
  for (int t = 0; t < 4; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  cfg.colsb[4] = static_cast<uint16_t>(g.R), cfg.rows[4] = 16;
  for (int t = 5; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = static_cast<uint8_t>(g.R / 4);
  _tile_loadconfig(&cfg);
  const int64_t tile_bytes = g.R * 16, cb = g.cblocks;
  const auto lda = static_cast<size_t>(g.sw_bytes), ldc = static_cast<size_t>(g.ldc) * 4;
  for (int64_t oh = g.oh0; oh < g.oh1; ++oh)
    for (int64_t ow0 = 0; ow0 < g.OW; ow0 += 16) {
      _tile_zero(0);
      if (cb > 1) _tile_zero(1);
      if (cb > 2) _tile_zero(2);
      if (cb > 3) _tile_zero(3);
      for (int64_t kh = 0; kh < g.taps; ++kh) {
        _tile_loadd(4, g.x + (oh * g.sh + kh * g.dh) * g.row_bytes + ow0 * g.sw_bytes, lda);
        const int8_t* w = g.w + kh * tile_bytes;  // block b's tile of row kh: w + b taps tile_bytes
        const int64_t step = g.taps * tile_bytes;
        _tile_loadd(5, w, 64);
        _tile_dpbusd(0, 4, 5);
        if (cb > 1) {
          _tile_loadd(6, w + step, 64);
          _tile_dpbusd(1, 4, 6);
        }
        if (cb > 2) {
          _tile_loadd(7, w + 2 * step, 64);
          _tile_dpbusd(2, 4, 7);
        }
        if (cb > 3) {
          _tile_loadd(5, w + 3 * step, 64);
          _tile_dpbusd(3, 4, 5);
        }
      }
      int32_t* c = g.C + ((oh - g.oh0) * g.OW + ow0) * g.ldc;
      _tile_stored(0, c, ldc);
      if (cb > 1) _tile_stored(1, c + 16, ldc);
      if (cb > 2) _tile_stored(2, c + 32, ldc);
      if (cb > 3) _tile_stored(3, c + 48, ldc);
    }
  _tile_release();
}

const GemmU8S8Kernel kGemmU8S8Amx{"gemm_u8s8s32_amx", "avx512vnni", 4, true, 16, run_amx<false>};
const GemmU8S8Kernel kGemmU8U8Amx{"gemm_u8u8s32_amx", "avx512vnni", 4, true, 16, run_amx<true>};

}  // namespace fixpoint::xk
