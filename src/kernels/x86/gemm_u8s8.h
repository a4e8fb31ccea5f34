// u8 x s8 GEMM micro-kernels for 8-bit Conv/MatMul layers with int8 weights (docs/arithmetic.md
// §4, (14); docs/performance.md):
//
//   C[m*ldm + n*ldn] = sum_{k < Kp} A[m*Kp + k] * B(n, k)              (exact int32)
//
// A holds int8 weight rows, zero-padded to Kp, a multiple of the kernel's k_align. B holds uint8
// activation codes shifted into [0, 255] (u = q for uint8 codes, q + 128 for int8) in one of two
// layouts, the kernel's `quads`:
//   rows  (quads = false): B(n, k) = B[n*Kp + k], row n zero-padded to Kp (dot-product kernels:
//         each output a sum of vector products, reduced across lanes at the end);
//   quads (quads = true):  B(n, k) = B[(k/4)*N*4 + n*4 + k%4], N a multiple of n_align, ldn = 1
//         (broadcast kernels: 16 outputs n per register, four k per lane, no reduction);
//         or, when Bq is set, B(n, k) = Bq[k/4][n*4 + k%4]: one pointer per group of four k
//         (an indirection buffer: the implicit-GEMM convolution points each group straight
//         into its channel-quad input plane, conv_implicit.cc, instead of copying patches).
// Every product is within 255 * 128, so with K * 255 * 128 < 2^31 (the caller's check) every
// partial sum is exact in int32 and any summation order gives the same sum. The caller subtracts
// z_u * sum_k A[m][k] (z_u the shifted zero point) to get the sum of (q - z) w of (14).
//
// One implementation per ISA: `gemm_u8s8s32_avx512vnni` (quads; vpdpbusd: 64 byte products per
// instruction), `gemm_u8s8s32_avx2` (rows; bytes widened to int16 and vpmaddwd: exact, never the
// saturating vpmaddubsw) and `gemm_u8s8s32_scalar` (rows), chosen with the int16 GEMM
// (gemm_s16.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "fixpoint/page_allocator.h"

namespace fixpoint::xk {

// Bytes on 64-byte boundaries (page_allocator.h): the packed weights of the u8 x s8 kernels (an
// AMX tile row that crosses a cache line takes two: misaligned weight tiles had run the kernel at
// a third of its speed).
using AlignedBytes = std::vector<int8_t, PageAllocator<int8_t>>;

struct GemmU8S8Args {
  int64_t M, N, Kp;  // C is M x N; rows of A and B are Kp bytes long
  const int8_t* A;   // M weight rows
  const uint8_t* B;  // N activation rows
  int32_t* C;
  int64_t ldm, ldn;  // C strides of m and n
  const uint8_t* const* Bq = nullptr;  // quads kernels only: Kp/4 row pointers instead of B
  bool prefetch_b = false;  // through Bq, planes larger than the caches (GemmPairsArgs::prefetch_b)
  int64_t taps = 1;         // AMX: taps per channel quad in Bq's order (q taps + tap)
  int64_t quad_stride = 0;  // AMX: bytes from one channel quad's plane to the next
};

// The pixel form of the quads GEMM (channels along the vector lanes, each output position's word
// broadcast): C[j*ldc + m] = sum_{k < 4 Kq} A(m, k) * Bq[k/4][off[j] + k%4] for m < M, j < n
// (position-major: a register of sixteen rows is one store; requant_transposed_s32_avx512 turns
// them into channel-major codes),
// with any byte offsets off[j] (positions need not be consecutive: an implicit conv's valid outputs
// only, where the quads form computes the virtual positions past each row's end too).
// A is packed by pack_pixel_rows: per block of 64 rows (the last one M % 64), [Kq][rows][4].
// M must be a multiple of 16. Same sums as the quads form (exact int32, any order).
struct GemmU8S8PixelArgs {
  int64_t M, Kq;
  const int8_t* A;
  const uint8_t* const* Bq;
  const int64_t* off;  // n byte offsets from each Bq[k/4]
  int64_t n;
  int32_t* C;
  int64_t ldc;
  // Bytes the kernel prefetches into L2 while it runs (the next task's weights), or none.
  const int8_t* prefetch = nullptr;
  int64_t prefetch_bytes = 0;
};

// Positions per tile of the pixel form on a block of `rows` rows (a multiple of 16): 24
// accumulators of 16 rows each, 6 positions by 64 rows down to 24 by 16. Callers cut position
// runs in multiples of it (a run's tail takes tiles of 6 and fewer).
constexpr int64_t pixel_tile_positions(int64_t rows) { return 24 / (rows >= 64 ? 4 : rows >= 48 ? 3 : rows >= 32 ? 2 : 1); }

struct GemmU8S8Kernel {
  const char* name;  // e.g. "gemm_u8s8s32_avx512vnni"
  const char* isa;   // "scalar", "avx2", "avx512vnni"
  int k_align;       // Kp must be a multiple of this
  bool quads;        // B's layout (above)
  int n_align;       // quads: N must be a multiple of this (1 for rows)
  void (*run)(const GemmU8S8Args&);
  void (*pixels)(const GemmU8S8PixelArgs&) = nullptr;  // the pixel form, where the ISA has one
  const char* pixels_name = nullptr;
};

extern const GemmU8S8Kernel kGemmU8S8Scalar;
extern const GemmU8S8Kernel kGemmU8S8Avx2;
extern const GemmU8S8Kernel kGemmU8S8Avx512Vnni;
// On AMX tiles (gemm_u8s8_amx.cc; where cpu_has_amx_int8()): A packed by pack_conv_amx (Kp its
// row length, M rows rounded up to 16: C gets whole tiles of 16 rows), N a multiple of 16, Bq[q
// taps + t] = Bq[t] + q quad_stride (the implicit conv's planes), readable for quads up to CQ
// rounded up to 16.
extern const GemmU8S8Kernel kGemmU8S8Amx;
// The same with A's bytes unsigned (TDPBUUD): the low bytes of 16-bit weights, A packed by
// pack_conv_amx(w, Kp, 0). Its sums are exact in int32 where K 255 255 < 2^31.
extern const GemmU8S8Kernel kGemmU8U8Amx;

// The rows form of a conv of up to four input channels on AMX tiles (gemm_u8s8_amx.cc;
// conv_implicit.cc conv_rows_amx_u8): the input in NHWC, padded, a pixel's channels in four bytes,
// so the KW pixels of one kernel row under an output position are R = 4 KW consecutive bytes,
// and sixteen consecutive positions of an output row are an A tile read in place at a stride of
// 4 s_w bytes; the weights are B tiles (per block of 16 channels, per kernel row: KW quads x 16
// channels x 4 bytes, pack_conv_amx_rows; bytes past cg 0). TDPBUSD: u8 A x s8 B, exact int32
// sums, the quads kernels' sums (same bits).
struct AmxRowsArgs {
  const uint8_t* x;          // the padded NHWC input of one batch row
  int64_t row_bytes;         // bytes from one padded input row to the next
  int64_t sh, dh, sw_bytes;  // output row oh, kernel row kh: input row oh sh + kh dh; position ow at ow sw_bytes
  int64_t taps, R;           // kernel rows; bytes each (4 KW <= 64)
  const int8_t* w;           // B tiles of cblocks blocks of 16 channels
  int64_t cblocks;           // 1..4
  int64_t oh0, oh1, OW;      // output rows [oh0, oh1) of OW positions
  // Position-major sums: C[((oh - oh0) OW + ow) ldc + 16 cb + n]. A row's last tile stores all
  // sixteen of its positions: C holds 16 positions past (oh1 - oh0) OW, and the positions past a
  // row's end land on the next row's, which are stored after them.
  int32_t* C;
  int64_t ldc;
};
void conv_rows_amx(const AmxRowsArgs& g);

// The kernel for `isa` if this CPU can run it, else nullptr.
const GemmU8S8Kernel* gemm_u8s8_for(const std::string& isa);

}  // namespace fixpoint::xk
