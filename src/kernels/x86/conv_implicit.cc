// 8-bit 1-D/2-D convolutions as an implicit GEMM on the broadcast u8 x s8 kernel (gemm_u8s8.h,
// quads layout): no im2col. The same accumulator a[c] = q_b[c] + sum (q_x - z_x) q_w of
// docs/arithmetic.md (14) as the reference, summed exactly in int32, then RQ (13).
//
// The input of each (batch row, group) is rewritten once into channel quads: the codes of four
// channels of one pixel in one 32-bit word (shifted into [0, 255] as the u8 x s8 GEMM wants,
// gemm_u8s8.h), the plane padded with z_u to the window's reach and split into its stride
// phases (phase (py, px) holds padded pixels (y s_h + py, x s_w + px)). Every kernel tap then
// reads, for consecutive output positions, consecutive words of one phase plane: output (oh, ow)
// at tap (kh, kw) reads word (oh + kh d_h / s_h) * Wq + ow + kw d_w / s_w of phase
// ((kh d_h) % s_h, (kw d_w) % s_w). With virtual positions p = oh * Wq + ow over the phase
// width Wq (the columns ow >= OW are computed and dropped), that address is p plus a constant per
// (channel quad, tap), so the GEMM's B is an indirection buffer of one pointer per group of four
// k (GemmU8S8Args::Bq) and its rows are the input itself. The weights are packed in the same k
// order (pack_conv_quads): k = (quad * taps + tap) * 4 + channel % 4, channels past the group's
// count with weight 0. The rewrite costs one pass over the input instead of an im2col copy
// taps times its size.
#include <emmintrin.h>  // SSE2 (x86-64 baseline): the quad interleave

#include <cstring>

#include "../reference/common.h"
#include "conv_epilogue.h"
#include "conv_gemm.h"
#include "fixpoint/parallel.h"

namespace fixpoint::xk {
namespace {

constexpr int64_t kPositions = 64;  // virtual output positions per task (the kernel's 6 x 64 tile)
constexpr int64_t kMinTasks = 8;    // below this many position tasks, output channels are split too

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Where the implicit GEMM reads: the phase planes of one (batch row, group) and the word offset
// of each (channel quad, tap) group of k.
struct QuadPlanes {
  int64_t sy, sx, Hq, Wq, CQ;
  int64_t plane;                 // words per (phase, channel quad)
  int64_t words;                 // words per (batch row, group), slack included
  std::vector<int64_t> k_off;    // per group of four k: word offset of its reads at position 0

  QuadPlanes(const ref::ConvGeometry& geo, int64_t cq) : CQ(cq) {
    const ref::Window& w = geo.w3;
    sy = w.stride[1];
    sx = w.stride[2];
    // Padded rows/columns the valid outputs reach, from -pad_begin.
    int64_t Hp = (w.out[1] - 1) * sy + (w.kernel[1] - 1) * w.dilation[1] + 1;
    int64_t Wp = (w.out[2] - 1) * sx + (w.kernel[2] - 1) * w.dilation[2] + 1;
    Hq = ceil_div(Hp, sy);
    Wq = ceil_div(Wp, sx);
    plane = Hq * Wq;
    // A task reads up to 15 positions past the last one (the kernel's 16-lane tail) plus the
    // largest tap offset: past the last plane by at most Wq + 16 words (zeroed slack).
    words = sy * sx * CQ * plane + Wq + 16;
    for (int64_t q = 0; q < CQ; ++q)
      for (int64_t kk = 0; kk < geo.ks; ++kk) {
        int64_t dy = kk / w.kernel[2] % w.kernel[1] * w.dilation[1], dx = kk % w.kernel[2] * w.dilation[2];
        int64_t phase = dy % sy * sx + dx % sx;
        k_off.push_back((phase * CQ + q) * plane + dy / sy * Wq + dx / sx);
      }
  }
};

// Writes the phase planes of batch row b, group g (QuadPlanes) for codes read as bytes and
// shifted by `flip` (0x80 for int8 codes: + 128), padding = z_u, channels past cg = 0. Tasks
// split (phase, channel quad) planes.
void fill_quad_planes(const ref::ConvGeometry& geo, const QuadPlanes& qp, const uint8_t* x, uint8_t flip, uint8_t zu,
                      int64_t b, int64_t g, uint8_t* dst, int threads) {
  const ref::Window& w = geo.w3;
  const int64_t H = w.in[1], W = w.in[2], cg = geo.cg;
  const int64_t pt = w.pad_begin[1], pl = w.pad_begin[2];
  parallel_for(qp.sy * qp.sx * qp.CQ, threads, [&](int64_t t) {
    int64_t phase = t / qp.CQ, q = t % qp.CQ, py = phase / qp.sx, px = phase % qp.sx;
    uint8_t* out = dst + t * qp.plane * 4;
    ref::ColumnRange cols = ref::valid_columns(px - pl, qp.sx, W, qp.Wq);
    int64_t lo = std::min(cols.lo, qp.Wq), hi = std::min(std::max(cols.hi, lo), qp.Wq);
    uint8_t fill[4];  // a padding word: z_u for real channels, 0 past cg (weight 0)
    int real = static_cast<int>(std::min<int64_t>(4, cg - q * 4));
    for (int j = 0; j < 4; ++j) fill[j] = j < real ? zu : 0;
    uint32_t pad_word;
    std::memcpy(&pad_word, fill, 4);
    const __m128i vflip = _mm_set1_epi8(static_cast<char>(flip)), zero = _mm_setzero_si128();
    for (int64_t r = 0; r < qp.Hq; ++r) {
      uint8_t* row = out + r * qp.Wq * 4;
      int64_t ih = r * qp.sy + py - pt;
      if (ih < 0 || ih >= H || hi <= lo) {
        for (int64_t c = 0; c < qp.Wq; ++c) std::memcpy(row + c * 4, &pad_word, 4);
        continue;
      }
      const uint8_t* src[4];  // the four channels' input rows, nullptr past cg
      for (int j = 0; j < 4; ++j)
        src[j] = j < real ? x + ((b * geo.C + g * cg + q * 4 + j) * H + ih) * W + cols.off : nullptr;
      for (int64_t c = 0; c < lo; ++c) std::memcpy(row + c * 4, &pad_word, 4);
      int64_t c = lo;
      if (qp.sx == 1) {  // 16 pixels at a time: four channel rows interleaved into 64 bytes
        for (; c + 16 <= hi; c += 16) {
          __m128i v[4];
          for (int j = 0; j < 4; ++j)
            v[j] = src[j] ? _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[j] + c)), vflip) : zero;
          __m128i ab_lo = _mm_unpacklo_epi8(v[0], v[1]), ab_hi = _mm_unpackhi_epi8(v[0], v[1]);
          __m128i cd_lo = _mm_unpacklo_epi8(v[2], v[3]), cd_hi = _mm_unpackhi_epi8(v[2], v[3]);
          __m128i* o = reinterpret_cast<__m128i*>(row + c * 4);
          _mm_storeu_si128(o, _mm_unpacklo_epi16(ab_lo, cd_lo));
          _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
          _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
          _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
        }
      }
      for (; c < hi; ++c)
        for (int j = 0; j < 4; ++j) row[c * 4 + j] = src[j] ? static_cast<uint8_t>(src[j][c * qp.sx] ^ flip) : 0;
      for (c = hi; c < qp.Wq; ++c) std::memcpy(row + c * 4, &pad_word, 4);
    }
  });
}

}  // namespace

bool implicit_conv_applies(const QOp& op, const GemmU8S8Kernel& k) {
  const Tensor& w = qref::weighted(op).weight;
  return k.quads && op.is<params::Conv>() && (w.rank() == 3 || w.rank() == 4);
}

std::vector<int8_t> pack_conv_quads(const Tensor& w, int64_t& Kp) {
  const int64_t M = w.dim(0), cg = w.dim(1), ks = w.numel() / std::max<int64_t>(M * cg, 1), CQ = ceil_div(cg, 4);
  Kp = CQ * ks * 4;
  std::vector<int8_t> r(static_cast<size_t>(M * Kp), 0);
  const int8_t* src = w.data<int8_t>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t kk = 0; kk < ks; ++kk)
        r[static_cast<size_t>(m * Kp + ((ci / 4) * ks + kk) * 4 + ci % 4)] = src[(m * cg + ci) * ks + kk];
  return r;
}

void conv_implicit_u8(qref::QContext& c, const PackedWeights& pw) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const Tensor& wt = qref::weighted(op).weight;
  qref::ChannelRequant rq(c);
  ref::ConvGeometry geo = ref::conv_geometry(op.node, x.shape(), wt.shape());
  FP_CHECK(geo.w3.in[0] == 1 && geo.w3.kernel[0] == 1 && geo.cg * geo.ks == pw.K && geo.M == pw.rows,
           op.node.label(), ": packed weights do not fit the layer");
  const int64_t N = geo.N, M = geo.M, group = geo.group, mg = geo.mg, OH = geo.w3.out[1], OW = geo.w3.out[2];
  const int64_t Kp = pw.Kp, CQ = ceil_div(geo.cg, 4);
  Tensor& y = c.output(0, geo.out_shape, false);  // every element is written below
  QuadPlanes qp(geo, CQ);
  const int64_t P = OH * qp.Wq;
  bool int8 = x.dtype() == DType::Int8;
  uint8_t flip = int8 ? 0x80 : 0;
  int64_t zu = c.in_q[0].zero_point + (int8 ? 128 : 0);
  const uint8_t* xb = int8 ? reinterpret_cast<const uint8_t*>(x.data<int8_t>()) : x.data<uint8_t>();

  // The phase planes of every (batch row, group); their slack zeroed (read only for dropped outputs).
  const int64_t bg_bytes = qp.words * 4;
  Scratch<uint8_t> planes(c.pool, static_cast<size_t>(N * group * bg_bytes));
  for (int64_t bg = 0; bg < N * group; ++bg) {
    uint8_t* d = planes.data() + bg * bg_bytes;
    fill_quad_planes(geo, qp, xb, flip, static_cast<uint8_t>(zu), bg / group, bg % group, d, c.threads);
    int64_t used = qp.sy * qp.sx * CQ * qp.plane * 4;
    std::memset(d + used, 0, static_cast<size_t>(bg_bytes - used));
  }

  // Tasks: (batch row, group, chunk of positions, block of output channels); the channel split
  // only when there are few position chunks (late layers: 7 x 7 outputs, hundreds of channels).
  const int64_t chunks = ceil_div(P, kPositions);
  int64_t mb = mg;
  if (N * group * chunks < kMinTasks) mb = std::max<int64_t>(6, ceil_div(ceil_div(mg, ceil_div(kMinTasks, N * group * chunks)), 6) * 6);
  const int64_t mblocks = ceil_div(mg, mb);
  const GemmU8S8Kernel& kern = *pw.u8;
  const int64_t kq = Kp / 4;
  qref::visit_int(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* yp = y.data<T>();
    parallel_for(N * group * chunks * mblocks, c.threads, [&](int64_t task) {
      int64_t bg = task / (chunks * mblocks), chunk = task / mblocks % chunks, m0 = task % mblocks * mb;
      int64_t b = bg / group, g = bg % group, p0 = chunk * kPositions;
      int64_t nq = std::min(kPositions, P - p0), np = ceil_div(nq, kern.n_align) * kern.n_align;
      int64_t rows = std::min(mb, mg - m0);
      const uint8_t* base = planes.data() + bg * bg_bytes + p0 * 4;
      std::vector<const uint8_t*> bq(static_cast<size_t>(kq));
      for (int64_t i = 0; i < kq; ++i) bq[static_cast<size_t>(i)] = base + qp.k_off[static_cast<size_t>(i)] * 4;
      std::vector<int32_t> acc(static_cast<size_t>(rows * np));
      GemmU8S8Args args{rows, np, Kp, pw.w8.data() + (g * mg + m0) * Kp, nullptr, acc.data(), np, 1};
      args.Bq = bq.data();
      kern.run(args);
      // The valid outputs (ow < OW) of each output row the chunk covers.
      for (int64_t p = p0; p < p0 + nq;) {
        int64_t oh = p / qp.Wq, ow = p % qp.Wq, end = std::min(p0 + nq, (oh + 1) * qp.Wq);
        int64_t run = std::min(OW, ow + (end - p)) - ow;
        for (int64_t mi = 0; run > 0 && mi < rows; ++mi) {
          int64_t m = g * mg + m0 + mi;
          int32_t* a = acc.data() + mi * np + (p - p0);
          remove_zero_point(a, run, zu, pw.w8_sum[static_cast<size_t>(m)]);
          requant_store(rq, pw.requant, m, a, run, yp + (b * M + m) * OH * OW + oh * OW + ow);
        }
        p = end;
      }
    });
  });
}

}  // namespace fixpoint::xk
