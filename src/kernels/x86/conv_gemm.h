// Optimized run steps of 8- and 16-bit Conv and Gemm/MatMul: weights packed once per op
// (PackedWeights, made when a program loads), im2col rows + an ISA GEMM (gemm_u8s8.h for 8-bit
// codes with int8 weights, gemm_s16.h otherwise) + the reference's own per-channel
// requantization. Bit-identical to qref's conv/matmul (tested with randomized seeded inputs in
// tests/kernels/x86/conv_gemm_test.cc).
#pragma once
#include <memory>
#include <vector>

#include "../reference/integer/integer_kernels.h"
#include "gemm_s16.h"
#include "gemm_u8s8.h"
#include "depthwise.h"
#include "conv_epilogue.h"
#include "requant.h"

namespace fixpoint::xk {

// True when the op can take the GEMM path: 8- or 16-bit codes of `in_type` in, and every GEMM's
// sum of products (without the bias) provably within int32.
bool gemm_path_applies(const QOp& op, DType in_type);
inline bool gemm_path_applies(const qref::QContext& c) { return gemm_path_applies(c.op, c.in.at(0)->dtype()); }

// The prepare step of the optimized Conv / Gemm/MatMul run: the weights in the layout of one
// ISA's GEMM, made once. Either the u8 x s8 GEMM (8-bit codes, int8 weights, not depthwise):
// int8 rows zero-padded to Kp and each row's sum for the zero-point term; or the int16 GEMM:
// rows widened to int16 (two byte planes each for 16-bit weights the int16 GEMM cannot take
// whole), and for depthwise layers whole int16 rows.
// The tiled ConvTranspose's GEMM operand (conv_transpose_tiled_u8): per group, rows r = (output
// channel mi, tap) of Kp int8 codes (k = input channel, Kp = cg rounded up to 4), and each row's sum.
struct TransposeRows {
  int64_t groups = 0, cg = 0, R = 0, Kp = 0;
  std::vector<int8_t> a;
  std::vector<int64_t> sum;
};
TransposeRows pack_transpose_rows(const params::ConvTranspose& p);
// The tiled ConvTranspose's rows as a [groups R, cg, 1, 1] int64 tensor (row g R + r = (output
// channel mi, tap kk) of group g over its input channels), the operand pack_conv_pairs packs for
// 16-bit codes; an empty tensor when the weights do not have the layer's shape.
Tensor transpose_row_weights(const params::ConvTranspose& p);

struct PackedWeights {
  DType in_type = DType::UInt8;          // the input codes the packing was made for
  const GemmU8S8Kernel* u8 = nullptr;    // set: the u8 x s8 GEMM
  const GemmS16Kernel* s16 = nullptr;    // set: the int16 GEMM (and ConvTranspose, depthwise)
  int64_t rows = 0, K = 0, Kp = 0;
  bool split_x = false, split_w = false;  // byte planes of activations / weights (int16 GEMM)
  bool implicit = false;                  // u8 x s8 Conv as an implicit GEMM (conv_implicit.cc)
  bool pixels = false;                    // implicit, on the kernel's pixel form (w8: pack_pixel_rows)
  bool byte_planes = false;               // implicit, 16-bit codes as two byte planes (w8, w_sum64)
  bool amx = false;                       // implicit, on AMX tiles (u8: kGemmU8S8Amx, w8: pack_conv_amx)
  bool amx_rows = false;                  // implicit, the rows form on AMX tiles (w8: pack_conv_amx_rows)
  AlignedBytes w8;                        // u8 x s8: rows x Kp (implicit: pack_conv_quads' k order)
  AlignedBytes w8_lo;                     // amx, 16-bit weights: the low bytes (w8: the high ones)
  std::vector<int32_t> w8_sum;            // u8 x s8: sum_k w[m][k] per row
  std::vector<std::vector<int16_t>> w16;  // int16 GEMM: one or two planes of rows x Kp (pairs: pack_conv_pairs)
  const GemmPairsKernel* pairs = nullptr; // set: 16-bit codes' Conv on the pairs kernel (conv_implicit.cc)
  int64_t kb = 0;                         // pairs: k per int32 block
  std::vector<int64_t> w_sum64;           // pairs, byte_planes: sum_k w[m][k] per row
  RequantFns requant;                     // the ISA's vector (13) of int32 sums, where it has one
  TransposeRows transpose;                // ConvTranspose on the u8 x s8 kernel: its rows, packed at load
                                          // (16-bit codes: pairs, w16, kb, w_sum64 and rows = groups R)
  DepthwiseRowFn depthwise_row = nullptr;      // the ISA's depthwise tap over a row (8-bit codes)
  DepthwiseRow64Fn depthwise_row64 = nullptr;  // the same for 16-bit codes (int64 sums)
  DepthwiseRowS32Fn depthwise_s32 = nullptr;   // 2-D depthwise rows in registers (conv_depthwise_direct)
  DepthwiseRowS64Fn depthwise_s64 = nullptr;
  std::vector<int32_t> depthwise_taps;       // depthwise: rows x K taps as int32 (the row kernels' operand)
  DepthwiseRowS32Fn depthwise_pairs = nullptr;  // the _s32 rows two taps at a time (VNNI), on:
  std::vector<int32_t> depthwise_pair_taps;     // rows x KH x ceil(KW / 2) tap pairs (depthwise.h)
  DepthwiseTwoRowsFn depthwise_pairs2 = nullptr;  // the _pairs rows, two output rows a call
  bool depthwise_split16 = false;  // 16-bit codes on the _pairs rows, a byte plane each (2^8 sum |w| < 2^31)
  DepthwiseRowS32Fn depthwise_quads = nullptr;     // the _s32 rows four taps at a time (VNNI, int8 taps), on:
  std::vector<int32_t> depthwise_quad_taps;        // rows x KH x ceil(KW / 4) tap quads (depthwise.h)
  std::vector<int64_t> depthwise_quad_sum;         // sum of each row's taps (the z_u term)
  DepthwiseTwoRowsFn depthwise_quads2 = nullptr;   // the _quads rows, two output rows a call
  RequantRow64Fn requant64 = nullptr;          // the ISA's vector (13) of int64 sums, if it has one
  const char* kernel_name() const {
    return pairs ? pairs->name : amx_rows ? "conv_rows_u8s8s32_amx" : u8 ? (pixels ? u8->pixels_name : u8->name) : s16->name;
  }
};

// Packs a Conv or Gemm/MatMul op's weights for `isa`'s GEMM; nullptr when the op cannot take
// the GEMM path, `isa` has no GEMM on this CPU, or it is "reference".
// With `amx` (on "avx512vnni", where cpu_has_amx_int8()), the 8-bit convs amx_conv_applies takes
// run on AMX tiles.
std::shared_ptr<const PackedWeights> pack_weights(const QOp& op, DType in_type, const std::string& isa, bool amx = false);

// Require c's input of pw.in_type.
void conv_gemm(qref::QContext& c, const PackedWeights& pw);
// 1-D/2-D Conv on the quads (broadcast) u8 x s8 kernel with no im2col (conv_implicit.cc):
// implicit_conv_applies says when pack_weights takes it; pack_conv_quads packs the int8 weights
// in its k order and sets Kp.
bool implicit_conv_applies(const QOp& op, const GemmU8S8Kernel& k);
AlignedBytes pack_conv_quads(const Tensor& w, int64_t& Kp);
// Whether an implicit conv takes the kernel's pixel form (gemm_u8s8.h), and its weights: the rows
// of pack_conv_quads (M x Kp), padded with zero rows to a multiple of 16, in blocks of 64 rows,
// [Kq][rows][4] each. byte_planes: for 16-bit codes' byte planes (PackedWeights::byte_planes),
// whose pixel epilogue takes wide layers too.
bool pixel_form_applies(const QOp& op, const GemmU8S8Kernel& k, int64_t M, int64_t K, bool byte_planes);
AlignedBytes pack_pixel_rows(const AlignedBytes& quads, int64_t M, int64_t Kp);
// The AMX kernel's layers (int8 weights, or int16 ones as two byte planes where K 255^2 < 2^31):
// Convs of one group and MatMuls of constant [N, K] weights (as 1x1 convs), at least
// kAmxMinChannels input channels (a B tile takes 16
// channel quads of one tap: fewer leave rows of it on zero weights) and 16 output channels.
// pack_conv_amx packs their int8 weights as its A tiles: per block of 16 rows (the last padded
// with zero rows), per tap, per block of 64 channels (zero past the last), 16 rows x 64 bytes;
// Kp = ceil(cg / 64) x 64 x taps (16 Kp: one block of rows).
constexpr int64_t kAmxMinChannels = 32;
bool amx_conv_applies(const QOp& op);
// The rows form on AMX tiles (AmxRowsArgs, gemm_u8s8.h) takes the 8-bit Convs of an image's
// channels: one group, 2-D, int8 weights, at least 16 output channels, up to four input
// channels (a pixel's four bytes), at most 16 kernel columns (rows of 4 KW <= 64 bytes), no
// dilation along the width, and at least 64 products per output (ResNet-18's stem: 3 x 7 x 7;
// with fewer, the layer's work is its stores, and the position-major sums' transposing epilogue
// cost more than the tiles saved: Zero-DCE's 3 x 3 x 3 conv at 384 x 384 took 5.1-6.3 ms against
// 4.2-4.4 on the quads form). pack_conv_amx_rows packs the weights as its B tiles (Kp = 4 KH KW
// bytes per output channel).
bool amx_rows_applies(const QOp& op);
AlignedBytes pack_conv_amx_rows(const Tensor& w, int64_t& Kp);
// byte: -1 for int8 weights; for int16 weights w = 2^8 hi + lo, 1 packs hi (signed), 0 lo (the
// unsigned byte, for kGemmU8U8Amx).
AlignedBytes pack_conv_amx(const Tensor& w, int64_t& Kp, int byte = -1);
void conv_implicit_u8(qref::QContext& c, const PackedWeights& pw);
// The same for 16-bit codes on the int16 pairs kernel (any weights): pack_conv_pairs packs the
// weights in its k order, blocked by kb (each block's int32 sums exact), with each row's sum; or,
// for int8 weights (pw.byte_planes), on the quads kernel a byte plane of the codes at a time.
std::vector<int16_t> pack_conv_pairs(const Tensor& w, int64_t& Kp, int64_t& kb, std::vector<int64_t>& sums);
void conv_implicit_s16(qref::QContext& c, const PackedWeights& pw);
// 2-D depthwise Conv with the taps summed in registers (depthwise_direct.cc); false (nothing
// done) where pw has no row kernels or the layer is not one it handles.
bool conv_depthwise_direct(qref::QContext& c, const PackedWeights& pw);
void matmul_gemm(qref::QContext& c, const PackedWeights& pw);
// Gemm/MatMul on 16-bit codes (any weights) on the pairs kernel: the rows as the positions of a
// 1x1 conv over K channels (conv_implicit.cc); pw packs the [N, K] weights with pack_conv_pairs.
void matmul_pairs(qref::QContext& c, const PackedWeights& pw);
// ConvTranspose (22): a GEMM per group (weights x transposed input) and an exact col2im (8-bit
// codes; requires gemm_path_applies(c)).
void conv_transpose_gemm(qref::QContext& c, const GemmS16Kernel& k);
// ConvTranspose (22) whose kernel tiles the output (kernel = stride, no dilation, pads or output
// padding: each output pixel is one tap of one input pixel), 8-bit codes, int8 weights, 1-D/2-D,
// on the quads u8 x s8 kernel (conv_implicit.cc): a pointwise implicit GEMM of rows (output
// channel, tap) by input pixels, each row's codes stored at its tap's output pixels. False
// (nothing done) elsewhere.
// `rows`: pack_transpose_rows of the op, made at load (nullptr: packed here).
bool conv_transpose_tiled_u8(qref::QContext& c, const GemmU8S8Kernel& k, const RequantFns& fns,
                             const TransposeRows* rows = nullptr);
// The same for 16-bit codes (any weights) on the pairs kernel: pw packs transpose_row_weights
// with pack_conv_pairs. False (nothing done) where pw has no pairs kernel or the layer does not tile.
bool conv_transpose_tiled_s16(qref::QContext& c, const PackedWeights& pw);
// The optimized ConvTranspose of `isa`: the tiled path where it applies, else the int16 GEMM
// where gemm_path_applies, else the reference kernel.
void run_conv_transpose(qref::QContext& c, const std::string& isa, const TransposeRows* rows = nullptr);

// The kernel the runtime runs for a program op kind: the optimized one of selected_isa() where
// there is one and it applies (else the reference), or the reference one for "reference".
// Conv and MatMul pack their weights on every call here; the runtime packs them once and calls
// run_packed.
qref::QKernelFn find_runtime_kernel(const std::string& kind);
// Runs a Conv or Gemm/MatMul op with weights packed by pack_weights for selected_isa(); the
// runtime kernel of its kind when the input's dtype is not the one they were packed for.
void run_packed(qref::QContext& c, const PackedWeights& pw);

}  // namespace fixpoint::xk
