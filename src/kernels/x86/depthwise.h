// One tap of the depthwise fast path over a contiguous run of output columns, per ISA:
// acc[i] += w * x[i] for i < n, in int32 (8-bit codes) or int64 (16-bit codes) (conv_gemm.cc; the
// generic build vectorizes it only for SSE2).
#pragma once
#include <cstdint>
#include <vector>

namespace fixpoint::xk {

using DepthwiseRowFn = void (*)(int32_t* acc, const int16_t* x, int64_t n, int32_t w);
void depthwise_row_s16_avx2(int32_t* acc, const int16_t* x, int64_t n, int32_t w);
using DepthwiseRow64Fn = void (*)(int64_t* acc, const int32_t* x, int64_t n, int64_t w);
void depthwise_row_s32_avx2(int64_t* acc, const int32_t* x, int64_t n, int64_t w);

// One output row of a 2-D depthwise convolution from a zero-padded plane of centered codes
// (depthwise_avx512.cc, AVX-512F): out[ow] = sum_{kh < KH, kw < KW} w[kh KW + kw] *
// rows[kh][ow sx + kw dw] for ow < OW rounded up to 16 (out and every row readable that far:
// the caller pads them). _s32: 8-bit codes (|x| <= 255), int32 sums; _s64: 16-bit codes
// (|x| <= 65535), int64 sums. |w| <= 2^15, KH KW <= 256.
struct DepthwiseRowArgs {
  const int32_t* const* rows;  // KH input rows of the padded plane
  const int32_t* w;            // KH x KW taps
  int64_t KH, KW, sx, dw, OW;
  int64_t group_step = 0;  // _pairs / _quads: row elements from one tap group to the next (G dw,
                           // or 1 on a plane of even-column pairs, where sx is then 1)
};
using DepthwiseRowS32Fn = void (*)(const DepthwiseRowArgs& a, int32_t* out);
using DepthwiseRowS64Fn = void (*)(const DepthwiseRowArgs& a, int64_t* out);
void depthwise_row_s32_avx512(const DepthwiseRowArgs& a, int32_t* out);
void depthwise_row_s64_avx512(const DepthwiseRowArgs& a, int64_t* out);

// The _s32 row (8-bit codes) on VNNI's vpdpwssd, two taps per instruction (AVX-512 F + VNNI):
// the same sums as depthwise_row_s32_avx512 (exact int32, so the order of the taps does not
// matter). Its operands are pairs: rows[kh][j] holds the centered codes (c[j], c[j + dw]) as the
// low and high int16 halves (|c| <= 255), and w holds, per kh, ceil(KW / 2) pairs (w[2p],
// w[2p + 1]) (0 past KW) as int16 halves (depthwise_group_taps). Rows readable
// as far as depthwise_row_s32_avx512's.
void depthwise_row_pairs_avx512vnni(const DepthwiseRowArgs& a, int32_t* out);
// The _pairs row for two output rows at once: a.rows and rows1 their KH input rows, out0 and
// out1 their sums (each written as far as the one-row kernel writes its row).
using DepthwiseTwoRowsFn = void (*)(const DepthwiseRowArgs& a, const int32_t* const* rows1, int32_t* out0, int32_t* out1);
void depthwise_two_rows_pairs_avx512vnni(const DepthwiseRowArgs& a, const int32_t* const* rows1, int32_t* out0,
                                         int32_t* out1);
// One row of the _pairs kernel's plane from a row of W 8-bit codes (is_signed: int8, else
// uint8) placed at column pl of a zero row (AVX-512 F + BW): out[j] = (c(j), c(j + dw)) for
// j < PW, where c(j) = src[j - pl] - z inside the row and 0 outside (padding adds nothing).
void depthwise_pair_row_avx512vnni(const void* src, bool is_signed, int64_t W, int64_t pl, int32_t z, int64_t dw,
                                   int64_t PW, int32_t* out);
// The _pairs plane row of a stride-2, dilation-1 conv, which reads only even-column pairs
// (AVX-512 F + BW): out[i] = (c(2i), c(2i + 1)) for i < RS, c as above.
void depthwise_half_row_avx512vnni(const void* src, bool is_signed, int64_t W, int64_t pl, int32_t z, int64_t RS,
                                   int32_t* out);
// The same rows four taps per instruction (vpdpbusd, AVX-512 F + VNNI), for 8-bit codes and
// int8 taps: rows[kh][j] holds the bytes (u(j), u(j + dw), u(j + 2 dw), u(j + 3 dw)) of the
// shifted codes u = q - z + z_u in [0, 255] (the padding: z_u), and w holds, per kh,
// ceil(KW / 4) quads (w[4g], .., w[4g + 3]) (0 past KW) as signed bytes (depthwise_group_taps).
// The sums are sum w u = sum w (q - z) + z_u sum w: the caller takes z_u sum w off. Exact in
// int32 (|sum| <= 255 * 128 * 256).
void depthwise_row_quads_avx512vnni(const DepthwiseRowArgs& a, int32_t* out);
void depthwise_two_rows_quads_avx512vnni(const DepthwiseRowArgs& a, const int32_t* const* rows1, int32_t* out0,
                                         int32_t* out1);
// The row u of shifted codes the _quads planes are built from (AVX-512 F + BW): u[j] =
// src[j - pl] ^ flip (flip 0x80: int8 codes + 128) for j in [pl, pl + W), z_u elsewhere, for
// j < n (u writable to max(n, pl + W) rounded up to 64, plus 64; src's W bytes the only ones read).
void depthwise_shifted_row_avx512(const void* src, int64_t W, int64_t pl, uint8_t flip, uint8_t zu, int64_t n,
                                  uint8_t* u);
// One row of the _quads plane from a row u of shifted codes (AVX-512 F + BW): out[j] = (u[j],
// u[j + dw], u[j + 2 dw], u[j + 3 dw]) for j < n rounded up to 16 (out writable and u readable
// that far, u 3 dw more).
void depthwise_quad_row_avx512vnni(const uint8_t* u, int64_t dw, int64_t n, int32_t* out);
// The _pairs planes of 16-bit codes, one per byte (AVX-512 F): from a row c of centered codes
// (|c| <= 65535) split as c = 2^8 h + l (l = c & 255, h = c >> 8, floor), lo[j] = (l(j),
// l(j + dw)) and hi[j] = (h(j), h(j + dw)) as int16 halves for j < n rounded up to 16 (c readable
// to that plus dw). The _pairs rows then sum each plane exactly in int32 where 2^8 sum |w| < 2^31,
// and sum w c = 2^8 sum w h + sum w l.
void depthwise_split_pairs_avx512(const int32_t* c, int64_t dw, int64_t n, int32_t* lo, int32_t* hi);
// Per channel of rows x KH x KW taps, the taps of the group rows: per (row, kh), ceil(KW / G)
// words of G taps each, w[G g + k] in bits [32 k / G, 32 (k + 1) / G) (0 past KW): G = 2, int16
// pairs for the _pairs kernel; G = 4, signed bytes for the _quads kernel (taps within int8).
std::vector<int32_t> depthwise_group_taps(const int32_t* taps, int64_t rows, int64_t KH, int64_t KW, int G);
}  // namespace fixpoint::xk
