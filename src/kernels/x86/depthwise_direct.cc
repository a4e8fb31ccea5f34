// 2-D depthwise convolutions (one input channel per output channel) of 8- or 16-bit codes with
// every tap summed in registers (depthwise.h's row kernels) instead of a pass over an
// accumulator plane per tap. Per (batch row, channel) plane: the codes written once into a padded
// int32 plane (so no tap is bounds-checked), each output row summed by the row kernel, then the
// bias and RQ (13), the same exact sums as the reference's (14), so the same codes. The plane
// holds centered codes q - z_x (padding 0); with VNNI, 8-bit codes' planes hold groups of codes a
// dilation apart, summed a group per instruction: quads of shifted codes u = q - z_x + z_u in
// [0, 255] (padding z_u, int8 taps, vpdpbusd, the z_u sum w term folded into the bias as in the
// u8 x s8 GEMM), else pairs of centered codes (wider taps, vpdpwssd).
#include <algorithm>
#include <type_traits>
#include <vector>

#include "../reference/common.h"
#include "conv_epilogue.h"
#include "conv_gemm.h"
#include "fixpoint/parallel.h"
#include "fixpoint/task_buffer.h"

namespace fixpoint::xk {

bool conv_depthwise_direct(qref::QContext& c, const PackedWeights& pw) {
  const Tensor& x = *c.in[0];
  const Tensor& wt = qref::weighted(c.op).weight;
  if (!pw.depthwise_s32 || !pw.depthwise_s64 || pw.depthwise_taps.empty()) return false;
  ref::ConvGeometry geo = ref::conv_geometry(c.op.node, x.shape(), wt.shape());
  const ref::Window& w = geo.w3;
  bool planar = w.kernel[0] == 1 && w.in[0] == 1 && w.out[0] == 1 && w.pad_begin[0] == 0;
  if (!planar || geo.cg != 1 || geo.mg != 1 || geo.ks > 256) return false;
  const bool x16 = x.dtype() == DType::Int16 || x.dtype() == DType::UInt16;
  if (!x16 && x.dtype() != DType::Int8 && x.dtype() != DType::UInt8) return false;
  const int64_t KH = w.kernel[1], KW = w.kernel[2], sy = w.stride[1], sx = w.stride[2], dh = w.dilation[1],
                dw = w.dilation[2];
  const int64_t H = w.in[1], W = w.in[2], OH = w.out[1], OW = w.out[2], OWr = (OW + 15) / 16 * 16;
  // The padded plane: every row the outputs reach, each as wide as the row kernel reads (up to
  // 16 columns past OW, and one more value for the stride-2 permute).
  const int64_t PH = (OH - 1) * sy + (KH - 1) * dh + 1, PW = (OWr - 1) * sx + (KW - 1) * dw + 2;
  const int64_t pt = w.pad_begin[1], pl = w.pad_begin[2], zx = c.in_q[0].zero_point;
  // Quads where the plane's rows serve several output rows each: at column stride 2 (dilation
  // 1) the plane of even-column pairs took less to build than quads saved (OCR det's stride-2
  // 3x3 and 5x5 layers 0.16-0.20 -> 0.19-0.22 ms; its stride-1 5x5 ones 0.39 -> 0.33).
  const bool quads = !x16 && pw.depthwise_quads && wt.rank() == 4 && !(sx == 2 && dw == 1);
  const bool pairs = !x16 && !quads && pw.depthwise_pairs && wt.rank() == 4;
  const int64_t G = quads ? 4 : 2, KG = (KW + G - 1) / G;
  // Stride 2, dilation 1 (pairs): every pair a tap pair reads starts on an even column,
  // (c(2i), c(2i + 1)), which is the row's centered codes as consecutive int16 values. The plane
  // then holds only those pairs (RS = half a row's columns), and the row kernel reads them with
  // stride 1 and one pair per tap pair: no strided gathers, half the plane to build.
  const bool halves = pairs && sx == 2 && dw == 1;
  // Quads: plane rows as far as the kernel reads, rounded up to the builder's 16 a step, built
  // from a row of shifted codes padded with z_u (UN bytes: as far as the builder reads; UW: as
  // far as depthwise_shifted_row_avx512 writes).
  const int64_t QW = (OWr - 1) * sx + (4 * KG - 1) * dw + 2;
  const int64_t RS = quads ? (QW + 15) / 16 * 16 : halves ? OWr + KG + 1 : PW;
  const int64_t UN = RS + 3 * dw + 16, UW = (std::max(UN, pl + W) + 63) / 64 * 64 + 64;
  // 16-bit codes on the pairs rows, one byte plane each (rows RS2 apart; the centered plane read
  // dw + 16 past its last row's end, hence the slack), where that wins: windows of 25 taps or
  // more at column stride 1 (OCR rec int16's 5x5 layers 0.41 -> 0.35 ms; its 3x3 ones went
  // 0.23 -> 0.29 and a stride-2 one 0.13 -> 0.19, the planes costing more than the taps saved).
  const bool split16 = x16 && pw.depthwise_split16 && pw.depthwise_pairs2 && wt.rank() == 4 && KH * KW >= 25 && sx == 1;
  const int64_t RS2 = (PW + 15) / 16 * 16;
  const bool x_signed = x.dtype() == DType::Int8;
  const int64_t zu = zx + (x_signed ? 128 : 0);  // quads: u = q - z_x + z_u = q (+ 128 for int8)
  qref::ChannelRequant rq(c);
  Tensor& y = c.output(0, geo.out_shape, false);  // every element is written below
  qref::visit_int(x.dtype(), [&](auto xtag) {
    using X = decltype(xtag);
    qref::visit_int(y.dtype(), [&](auto ytag) {
      using Y = decltype(ytag);
      const X* px = x.data<X>();
      Y* py = y.data<Y>();
      parallel_for(geo.N * geo.M, c.threads, [&](int64_t nm) {
        int64_t m = nm % geo.M;
        const X* xp = px + nm * geo.in_plane;
        int32_t* plane = task_buffer<int32_t, __LINE__>(static_cast<size_t>(PH * RS + (split16 ? RS2 + dw + 16 : 0)));
        uint8_t* urow = quads ? task_buffer<uint8_t, __LINE__>(static_cast<size_t>(UW)) : nullptr;
        for (int64_t r = 0; r < PH; ++r) {
          int32_t* row = plane + r * RS;
          int64_t ih = r - pt, lo = std::clamp<int64_t>(pl, 0, PW), hi = std::clamp<int64_t>(pl + W, lo, PW);
          if (quads) {
            if (ih < 0 || ih >= H) {
              std::fill(row, row + RS, static_cast<int32_t>(static_cast<uint32_t>(zu) * 0x01010101u));
              continue;
            }
            depthwise_shifted_row_avx512(xp + ih * W, W, pl, x_signed ? 0x80 : 0, static_cast<uint8_t>(zu), UN, urow);
            depthwise_quad_row_avx512vnni(urow, dw, RS, row);
            continue;
          }
          if (ih < 0 || ih >= H) {
            std::fill(row, row + RS, 0);
            continue;
          }
          if (halves) {
            depthwise_half_row_avx512vnni(xp + ih * W, std::is_signed_v<X>, W, pl, static_cast<int32_t>(zx), RS, row);
            continue;
          }
          if (pairs) {
            depthwise_pair_row_avx512vnni(xp + ih * W, std::is_signed_v<X>, W, pl, static_cast<int32_t>(zx), dw, PW, row);
            continue;
          }
          std::fill(row, row + lo, 0);
          const X* src = xp + ih * W - pl;
          for (int64_t j = lo; j < hi; ++j) row[j] = static_cast<int32_t>(src[j] - zx);
          std::fill(row + hi, row + PW, 0);
        }
        const int32_t* rows[256];
        const int32_t* taps = quads   ? pw.depthwise_quad_taps.data() + m * KH * KG
                              : pairs ? pw.depthwise_pair_taps.data() + m * KH * KG
                                      : pw.depthwise_taps.data() + m * geo.ks;
        DepthwiseRowArgs args{rows, taps, KH, KW, halves ? 1 : sx, dw, OW, halves ? 1 : G * dw};
        Y* out = py + nm * geo.out_plane;
        // The int32 sums of a plane p (rows rs apart) into s, rows OWr apart (as far as a row
        // kernel writes): two output rows a call where the ISA has the two-row kernel.
        const int32_t* rows1[256];
        auto sum_plane = [&](const DepthwiseRowArgs& a, DepthwiseRowS32Fn one, DepthwiseTwoRowsFn two, const int32_t* p,
                             int64_t rs, int32_t* s) {
          int64_t oh = 0;
          for (; two && oh + 1 < OH; oh += 2) {
            for (int64_t kh = 0; kh < KH; ++kh) {
              rows[kh] = p + (oh * sy + kh * dh) * rs;
              rows1[kh] = p + ((oh + 1) * sy + kh * dh) * rs;
            }
            two(a, rows1, s + oh * OWr, s + (oh + 1) * OWr);
          }
          for (; oh < OH; ++oh) {
            for (int64_t kh = 0; kh < KH; ++kh) rows[kh] = p + (oh * sy + kh * dh) * rs;
            one(a, s + oh * OWr);
          }
        };
        if (!x16) {
          // One RQ (13) pass over the sums where their rows are contiguous (OW a multiple of
          // 16), else one per row.
          int32_t* sums = task_buffer<int32_t, __LINE__>(static_cast<size_t>(OH * OWr));
          sum_plane(args, quads ? pw.depthwise_quads : pairs ? pw.depthwise_pairs : pw.depthwise_s32,
                    quads ? pw.depthwise_quads2 : pairs ? pw.depthwise_pairs2 : nullptr, plane, RS, sums);
          // Quads summed w u: z_u sum w off (the u8 x s8 GEMM's zero term).
          const int64_t zero_term = quads ? zu * pw.depthwise_quad_sum[static_cast<size_t>(m)] : 0;
          if (OW == OWr) {
            requant_store(rq, pw.requant, m, zero_term, sums, OH * OW, out);
          } else {
            for (int64_t oh = 0; oh < OH; ++oh)
              requant_store(rq, pw.requant, m, zero_term, sums + oh * OWr, OW, out + oh * OW);
          }
          return;
        }
        if (split16) {
          // 16-bit codes: the plane's byte planes of pairs, each summed by the pairs rows in
          // int32, then 2^8 sum w h + sum w l in int64 and the wide RQ (13).
          int32_t* bytes = task_buffer<int32_t, __LINE__>(static_cast<size_t>(2 * PH * RS2));
          for (int64_t r = 0; r < PH; ++r)
            depthwise_split_pairs_avx512(plane + r * RS, dw, RS2, bytes + r * RS2, bytes + (PH + r) * RS2);
          int32_t* sums = task_buffer<int32_t, __LINE__>(static_cast<size_t>(2 * OH * OWr));
          const DepthwiseRowArgs pargs{rows, pw.depthwise_pair_taps.data() + m * KH * KG, KH, KW, sx, dw, OW, 2 * dw};
          for (int64_t b = 0; b < 2; ++b)
            sum_plane(pargs, pw.depthwise_pairs, pw.depthwise_pairs2, bytes + b * PH * RS2, RS2, sums + b * OH * OWr);
          int64_t* sum = task_buffer<int64_t, __LINE__>(static_cast<size_t>(OWr));
          for (int64_t oh = 0; oh < OH; ++oh, out += OW) {
            const int32_t *sl = sums + oh * OWr, *sh = sums + (OH + oh) * OWr;
            for (int64_t i = 0; i < OW; ++i) sum[i] = int64_t{sh[i]} * 256 + sl[i];
            requant_wide_in_place(rq, pw.requant64, m, rq.bias[m], sum, OW);
            for (int64_t i = 0; i < OW; ++i) out[i] = static_cast<Y>(sum[i]);
          }
          return;
        }
        for (int64_t oh = 0; oh < OH; ++oh, out += OW) {
          for (int64_t kh = 0; kh < KH; ++kh) rows[kh] = plane + (oh * sy + kh * dh) * RS;
          int64_t* sum = task_buffer<int64_t, __LINE__>(static_cast<size_t>(OWr));
          pw.depthwise_s64(args, sum);
          requant_wide_in_place(rq, pw.requant64, m, rq.bias[m], sum, OW);
          for (int64_t i = 0; i < OW; ++i) out[i] = static_cast<Y>(sum[i]);
        }
      });
    });
  });
  return true;
}

std::vector<int32_t> depthwise_group_taps(const int32_t* taps, int64_t rows, int64_t KH, int64_t KW, int G) {
  const int64_t KG = (KW + G - 1) / G;
  const int bits = 32 / G;
  const uint32_t mask = (uint32_t{1} << bits) - 1;
  std::vector<int32_t> out(static_cast<size_t>(rows * KH * KG));
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t g = 0; g < KG; ++g) {
        const int32_t* t = taps + (m * KH + kh) * KW;
        uint32_t v = 0;
        for (int64_t k = 0; k < G && G * g + k < KW; ++k) v |= (static_cast<uint32_t>(t[G * g + k]) & mask) << (bits * k);
        out[static_cast<size_t>((m * KH + kh) * KG + g)] = static_cast<int32_t>(v);
      }
  return out;
}

}  // namespace fixpoint::xk
