// 8-bit 1-D/2-D convolutions as an implicit GEMM on the broadcast u8 x s8 kernel (gemm_u8s8.h,
// quads layout): no im2col. The same accumulator a[c] = q_b[c] + sum (q_x - z_x) q_w of
// docs/arithmetic.md (14) as the reference, summed exactly in int32, then RQ (13).
//
// The input of each (batch row, group) is rewritten once into channel quads: the codes of four
// channels of one pixel in one 32-bit word (shifted into [0, 255] as the u8 x s8 GEMM wants,
// gemm_u8s8.h), the plane padded with z_u to the window's reach and split into the stride
// phases its taps read (phase (py, px) holds padded pixels (y s_h + py, x s_w + px); a 1x1
// stride-2 conv reads one phase of four). Every kernel tap then
// reads, for consecutive output positions, consecutive words of one phase plane: output (oh, ow)
// at tap (kh, kw) reads word (oh + kh d_h / s_h) * Wq + ow + kw d_w / s_w of phase
// ((kh d_h) % s_h, (kw d_w) % s_w). With virtual positions p = oh * Wq + ow over the phase
// width Wq (the columns ow >= OW are computed and dropped), that address is p plus a constant per
// (channel quad, tap), so the GEMM's B is an indirection buffer of one pointer per group of four
// k (GemmU8S8Args::Bq) and its rows are the input itself. The weights are packed in the same k
// order (pack_conv_quads): k = (quad * taps + tap) * 4 + channel % 4, channels past the group's
// count with weight 0. The rewrite costs one pass over the input instead of an im2col copy
// taps times its size.
//
// 16-bit codes (conv_implicit_s16) take the same planes with two channels per word, as the two
// byte planes of the shifted code u = uh 2^8 + ul (u = q + 32768 for int16 codes, q for uint16):
// sum (q - z) w = 2^8 sum uh w + sum ul w - z_u sum w, each byte plane's sum on the int16 pairs
// kernel (gemm_s16.h; bytes times 8- or 16-bit weights) in blocks of k short enough for int32
// (pack_conv_pairs), the blocks and planes added in int64, then RQ (13) as the reference does.
#include <emmintrin.h>  // SSE2 (x86-64 baseline): the byte planes of 16-bit codes

#include <cstring>

#include "../reference/common.h"
#include "conv_epilogue.h"
#include "conv_gemm.h"
#include "fixpoint/cpu_isa.h"
#include "fixpoint/parallel.h"
#include "fixpoint/task_buffer.h"
#include "quad_interleave.h"

namespace fixpoint::xk {
namespace {

constexpr int64_t kPositions = 64;  // virtual output positions per task (the kernel's 6 x 64 tile)
constexpr int64_t kMinTasks = 8;    // below this many position tasks, output channels are split too

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Where the implicit GEMM reads: the phase planes of one (batch row, group) and the word offset
// of each (channel word, tap) group of k (a word: four channels' 8-bit codes, or two channels'
// 16-bit values; CQ words per pixel).
struct WordPlanes {
  int64_t sy, sx, Hq, Wq, CQ;
  std::vector<int64_t> phases;   // the phases some tap reads (py sx + px), in order: one plane each
  int64_t plane;                 // words per (phase, channel quad)
  int64_t words;                 // words per (batch row, group), slack included
  std::vector<int64_t> k_off;    // per group of four k: word offset of its reads at position 0

  // amx: for the AMX kernel, which reads B tiles of 16 channel quads: the planes are allocated for
  // CQ rounded up to 16 (the rows past CQ meet zero weights, so any bytes there give the same sums).
  WordPlanes(const ref::ConvGeometry& geo, int64_t cq, bool amx = false) : CQ(cq) {
    const int64_t over_read = amx ? ceil_div(cq, 16) * 16 - cq : 0;
    const ref::Window& w = geo.w3;
    sy = w.stride[1];
    sx = w.stride[2];
    // Padded rows/columns the valid outputs reach, from -pad_begin.
    int64_t Hp = (w.out[1] - 1) * sy + (w.kernel[1] - 1) * w.dilation[1] + 1;
    int64_t Wp = (w.out[2] - 1) * sx + (w.kernel[2] - 1) * w.dilation[2] + 1;
    Hq = ceil_div(Hp, sy);
    Wq = ceil_div(Wp, sx);
    plane = Hq * Wq;
    // Only the phases a tap reads are written (a 1x1 stride-2 conv reads one of four).
    const size_t ks = static_cast<size_t>(geo.ks);
    std::vector<int64_t> index(static_cast<size_t>(sy * sx), -1), tap_phase(ks), tap(ks);
    for (size_t kk = 0; kk < ks; ++kk) {
      const int64_t k = static_cast<int64_t>(kk);
      int64_t dy = k / w.kernel[2] % w.kernel[1] * w.dilation[1], dx = k % w.kernel[2] * w.dilation[2];
      tap_phase[kk] = dy % sy * sx + dx % sx;
      index[static_cast<size_t>(tap_phase[kk])] = 0;
      tap[kk] = dy / sy * Wq + dx / sx;
    }
    for (size_t ph = 0; ph < index.size(); ++ph)
      if (index[ph] >= 0) index[ph] = static_cast<int64_t>(phases.size()), phases.push_back(static_cast<int64_t>(ph));
    // A task reads up to 15 positions past the last one (the kernel's 16-lane tail) plus the
    // largest tap offset: past the last plane by at most Wq + 16 words (zeroed slack).
    words = (static_cast<int64_t>(phases.size()) * CQ + over_read) * plane + Wq + 16;
    for (size_t kk = 0; kk < ks; ++kk) tap[kk] += index[static_cast<size_t>(tap_phase[kk])] * CQ * plane;
    k_off.resize(static_cast<size_t>(CQ) * ks);
    for (int64_t q = 0; q < CQ; ++q)
      for (size_t kk = 0; kk < ks; ++kk) k_off[static_cast<size_t>(q) * ks + kk] = tap[kk] + q * plane;
  }
  int64_t planes() const { return static_cast<int64_t>(phases.size()) * CQ; }
};

// Writes the phase planes of batch row b, group g (QuadPlanes) for codes read as bytes and
// shifted by `flip` (0x80 for int8 codes: + 128), padding = z_u, channels past cg = 0. Tasks
// split (phase, channel quad) planes.
void fill_quad_planes(const ref::ConvGeometry& geo, const WordPlanes& qp, const uint8_t* x, uint8_t flip, uint8_t zu,
                      int64_t b, int64_t g, uint8_t* dst, int threads) {
  const ref::Window& w = geo.w3;
  const int64_t H = w.in[1], W = w.in[2], cg = geo.cg;
  const int64_t pt = w.pad_begin[1], pl = w.pad_begin[2];
  const bool avx512 = selected_isa() == "avx512vnni";  // (the quads kernel's ISA)
  parallel_for(qp.planes(), threads, [&](int64_t t) {
    int64_t phase = qp.phases[static_cast<size_t>(t / qp.CQ)], q = t % qp.CQ, py = phase / qp.sx, px = phase % qp.sx;
    uint8_t* out = dst + t * qp.plane * 4;
    ref::ColumnRange cols = ref::valid_columns(px - pl, qp.sx, W, qp.Wq);
    int64_t lo = std::min(cols.lo, qp.Wq), hi = std::min(std::max(cols.hi, lo), qp.Wq);
    uint8_t fill[4];  // a padding word: z_u for real channels, 0 past cg (weight 0)
    int real = static_cast<int>(std::min<int64_t>(4, cg - q * 4));
    for (int j = 0; j < 4; ++j) fill[j] = j < real ? zu : 0;
    uint32_t pad_word;
    std::memcpy(&pad_word, fill, 4);
    for (int64_t r = 0; r < qp.Hq; ++r) {
      uint8_t* row = out + r * qp.Wq * 4;
      int64_t ih = r * qp.sy + py - pt;
      auto pad_cols = [&](int64_t from, int64_t to) {
        for (int64_t c = from; c < to; ++c) std::memcpy(row + c * 4, &pad_word, 4);
      };
      if (ih < 0 || ih >= H || hi <= lo) {
        pad_cols(0, qp.Wq);
        continue;
      }
      const uint8_t* src[4];  // the four channels' input rows, nullptr past cg
      for (int j = 0; j < 4; ++j)
        src[j] = j < real ? x + ((b * geo.C + g * cg + q * 4 + j) * H + ih) * W + cols.off : nullptr;
      pad_cols(0, lo);
      // The valid columns: four channel rows interleaved into words, 64 pixels a step on
      // AVX-512 (the quads kernel's ISA), else one by one (and for strides past 2).
      if (avx512 && (qp.sx == 1 || qp.sx == 2)) {
        const uint8_t* from[4];
        for (int j = 0; j < 4; ++j) from[j] = src[j] ? src[j] + lo * qp.sx : nullptr;
        quad_interleave_avx512(from, static_cast<int>(qp.sx), flip, hi - lo, row + lo * 4);
      } else {
        for (int64_t c = lo; c < hi; ++c)
          for (int j = 0; j < 4; ++j) row[c * 4 + j] = src[j] ? static_cast<uint8_t>(src[j][c * qp.sx] ^ flip) : 0;
      }
      pad_cols(hi, qp.Wq);
    }
  });
}

// Planes up to this size stay in the caches the GEMM reads them from (GemmPairsArgs::prefetch_b,
// GemmU8S8Args::prefetch_b).
constexpr int64_t kCachedPlaneBytes = int64_t{2} << 20;

// The shifted input zero point z_u of c's 8-bit codes (u = code + 128 for int8: a sign-bit flip).
int64_t shifted_zero_point(const qref::QContext& c) {
  return c.in_q[0].zero_point + (c.in[0]->dtype() == DType::Int8 ? 128 : 0);
}

// The 8-bit input of an implicit GEMM: the quad phase planes of every (batch row, group) of
// c's input, [bg][qp.words * 4 bytes], their slack zeroed (read only for dropped outputs), and
// the shifted input zero point z_u.
struct QuadInput {
  Scratch<uint8_t> planes;
  int64_t zu, bg_bytes;
  QuadInput(qref::QContext& c, const ref::ConvGeometry& geo, const WordPlanes& qp)
      : planes(c.pool, static_cast<size_t>(geo.N * geo.group * qp.words * 4)), bg_bytes(qp.words * 4) {
    const Tensor& x = *c.in[0];
    zu = shifted_zero_point(c);
    fill(c, geo, qp, static_cast<const uint8_t*>(x.raw()), x.dtype() == DType::Int8 ? 0x80 : 0);
  }
  // One byte plane of 16-bit codes (BytePlanes): bytes in c's input layout, padding z_u.
  QuadInput(qref::QContext& c, const ref::ConvGeometry& geo, const WordPlanes& qp, const uint8_t* bytes, int64_t z_u)
      : planes(c.pool, static_cast<size_t>(geo.N * geo.group * qp.words * 4)), zu(z_u), bg_bytes(qp.words * 4) {
    fill(c, geo, qp, bytes, 0);
  }
  // The planes of every (batch row, group) of the 8-bit codes xb, shifted by flip.
  void fill(qref::QContext& c, const ref::ConvGeometry& geo, const WordPlanes& qp, const uint8_t* xb, uint8_t flip) {
    const int64_t used = qp.planes() * qp.plane * 4;
    for (int64_t bg = 0; bg < geo.N * geo.group; ++bg) {
      uint8_t* d = planes.data() + bg * bg_bytes;
      fill_quad_planes(geo, qp, xb, flip, static_cast<uint8_t>(zu), bg / geo.group, bg % geo.group, d, c.threads);
      std::memset(d + used, 0, static_cast<size_t>(std::min<int64_t>(bg_bytes - used, (qp.Wq + 16) * 4)));
    }
  }
  // The indirection buffer of a task (this thread's): for each of the kq groups of four k, where
  // it reads position p0 of (batch row, group) bg.
  const uint8_t** word_pointers(const WordPlanes& qp, int64_t bg, int64_t p0, int64_t kq) {
    const uint8_t* base = planes.data() + bg * bg_bytes + p0 * 4;
    const uint8_t** bq = task_buffer<const uint8_t*, __LINE__>(static_cast<size_t>(kq));
    for (int64_t i = 0; i < kq; ++i) bq[i] = base + qp.k_off[static_cast<size_t>(i)] * 4;
    return bq;
  }
  // One task's GEMM: rows x np int32 sums (in a task buffer, row stride np) of `rows` weight
  // rows w (Kp k each, pack_conv_quads' order) against np virtual positions from p0 of
  // (batch row, group) bg.
  // (Into acc if given: ceil(rows / 16) 16 np values.)
  int32_t* gemm(const GemmU8S8Kernel& kern, const WordPlanes& qp, int64_t bg, int64_t p0, const int8_t* w,
                int64_t rows, int64_t np, int64_t Kp, int32_t* acc = nullptr) {
    const uint8_t** bq = word_pointers(qp, bg, p0, static_cast<int64_t>(qp.k_off.size()));
    // (The AMX kernel stores whole tiles of 16 rows: the rows past `rows` have weight 0.)
    if (!acc) acc = task_buffer<int32_t, __LINE__>(static_cast<size_t>(ceil_div(rows, 16) * 16 * np));
    GemmU8S8Args args{rows, np, Kp, w, nullptr, acc, np, 1};
    args.Bq = bq;
    args.prefetch_b = bg_bytes > kCachedPlaneBytes;  // Zero-DCE's 384 x 384 layers 0.94-0.96x
    args.taps = static_cast<int64_t>(qp.k_off.size()) / qp.CQ;
    args.quad_stride = qp.plane * 4;
    kern.run(args);
    return acc;
  }
};

// Writes byte plane `byte` (0: low, 1: high) of the phase planes of batch row b, group g for
// 16-bit codes: each word two channels' bytes of u = code ^ flip (0x8000 for int16 codes) as
// int16 values in [0, 255], padding = z_u's byte, channels past cg = 0. Tasks split (phase,
// channel pair) planes.
void fill_pair_planes(const ref::ConvGeometry& geo, const WordPlanes& qp, const uint16_t* x, uint16_t flip, int64_t zu,
                      int byte, int64_t b, int64_t g, int16_t* dst, int threads) {
  const ref::Window& w = geo.w3;
  const int64_t H = w.in[1], W = w.in[2], cg = geo.cg;
  const int64_t pt = w.pad_begin[1], pl = w.pad_begin[2];
  const int sh = 8 * byte;
  parallel_for(qp.planes(), threads, [&](int64_t t) {
    int64_t phase = qp.phases[static_cast<size_t>(t / qp.CQ)], q = t % qp.CQ, py = phase / qp.sx, px = phase % qp.sx;
    int16_t* out = dst + t * qp.plane * 2;
    ref::ColumnRange cols = ref::valid_columns(px - pl, qp.sx, W, qp.Wq);
    int64_t lo = std::min(cols.lo, qp.Wq), hi = std::min(std::max(cols.hi, lo), qp.Wq);
    int real = static_cast<int>(std::min<int64_t>(2, cg - q * 2));
    int16_t pad[2] = {static_cast<int16_t>((zu >> sh) & 255), static_cast<int16_t>(real > 1 ? (zu >> sh) & 255 : 0)};
    const __m128i vflip = _mm_set1_epi16(static_cast<short>(flip)), mask = _mm_set1_epi16(255);
    for (int64_t r = 0; r < qp.Hq; ++r) {
      int16_t* row = out + r * qp.Wq * 2;
      int64_t ih = r * qp.sy + py - pt;
      auto pad_cols = [&](int64_t from, int64_t to) {
        for (int64_t c = from; c < to; ++c) row[2 * c] = pad[0], row[2 * c + 1] = pad[1];
      };
      if (ih < 0 || ih >= H || hi <= lo) {
        pad_cols(0, qp.Wq);
        continue;
      }
      const uint16_t* src[2];  // the two channels' input rows, nullptr past cg
      for (int j = 0; j < 2; ++j) src[j] = j < real ? x + ((b * geo.C + g * cg + q * 2 + j) * H + ih) * W + cols.off : nullptr;
      pad_cols(0, lo);
      int64_t c = lo;
      if (qp.sx == 1) {  // 8 pixels at a time: the two channel rows' bytes interleaved into 8 words
        for (; c + 8 <= hi; c += 8) {
          __m128i v[2];
          for (int j = 0; j < 2; ++j) {
            __m128i u = src[j] ? _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[j] + c)), vflip)
                               : _mm_setzero_si128();
            v[j] = _mm_and_si128(_mm_srli_epi16(u, sh), mask);
          }
          __m128i* o = reinterpret_cast<__m128i*>(row + c * 2);
          _mm_storeu_si128(o, _mm_unpacklo_epi16(v[0], v[1]));
          _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(v[0], v[1]));
        }
      }
      for (; c < hi; ++c)
        for (int j = 0; j < 2; ++j)
          row[2 * c + j] = src[j] ? static_cast<int16_t>(((src[j][c * qp.sx] ^ flip) >> sh) & 255) : int16_t{0};
      pad_cols(hi, qp.Wq);
    }
  });
}

// The pairs kernel's input: both byte planes of every (batch row, group) of 16-bit codes,
// [bg][byte][words], the slack zeroed; z_u = the zero point of the codes read as unsigned.
// The planes live in this thread's buffer (task_buffer.h), not the run's pool: a 16-bit layer's
// planes are four times its input (10 MB for the OCR detector's 96-channel 160 x 160 convs), no
// freed tensor fits them, and a fresh allocation per run cost more in zeroing and page faults
// than the layer's arithmetic.
struct PairInput {
  int16_t* planes;
  int64_t zu, bg_elems, plane_elems;
  // The codes xb (int16 or uint16: `type`, zero point z) in geo's input layout.
  PairInput(const ref::ConvGeometry& geo, const WordPlanes& qp, const uint16_t* xb, DType type, int64_t z, int threads)
      : planes(task_buffer<int16_t, __LINE__>(static_cast<size_t>(geo.N * geo.group * qp.words * 4))),
        bg_elems(qp.words * 4), plane_elems(qp.words * 2) {
    const bool int16 = type == DType::Int16;
    const uint16_t flip = int16 ? 0x8000 : 0;
    zu = z + (int16 ? 32768 : 0);
    const int64_t used = qp.planes() * qp.plane * 2;
    for (int64_t bg = 0; bg < geo.N * geo.group; ++bg)
      for (int byte = 0; byte < 2; ++byte) {
        int16_t* d = planes + bg * bg_elems + byte * plane_elems;
        fill_pair_planes(geo, qp, xb, flip, zu, byte, bg / geo.group, bg % geo.group, d, threads);
        std::fill(d + used, d + plane_elems, int16_t{0});
      }
  }
  // The op's input.
  PairInput(qref::QContext& c, const ref::ConvGeometry& geo, const WordPlanes& qp)
      : PairInput(geo, qp, static_cast<const uint16_t*>(c.in[0]->raw()), c.in[0]->dtype(), c.in_q[0].zero_point,
                  c.threads) {}
  // One task's sums: rows x np int64 (a task buffer, row stride np) of weight rows [row0, row0 +
  // rows) of w (pack_conv_pairs: Kp k per row in blocks of kb, M rows) against np virtual
  // positions from p0 of (batch row, group) bg; each block's int32 sums exact, added in int64.
  int64_t* sums(const GemmPairsKernel& kern, const WordPlanes& qp, int64_t bg, int64_t p0, const int16_t* w, int64_t M,
                int64_t row0, int64_t rows, int64_t np, int64_t Kp, int64_t kb) {
    const int64_t kq = Kp / 2;
    const int16_t** bq = task_buffer<const int16_t*, __LINE__>(static_cast<size_t>(2 * kq));
    for (int byte = 0; byte < 2; ++byte) {
      const int16_t* base = planes + bg * bg_elems + byte * plane_elems + p0 * 2;
      for (int64_t i = 0; i < kq; ++i) bq[byte * kq + i] = base + qp.k_off[static_cast<size_t>(i)] * 2;
    }
    int32_t* acc = task_buffer<int32_t, __LINE__>(static_cast<size_t>(rows * np));
    int64_t* sum = task_buffer<int64_t, __LINE__>(static_cast<size_t>(rows * np), int64_t{0});
    const bool prefetch_b = plane_elems * 2 > kCachedPlaneBytes;  // a byte plane's bytes
    for (int byte = 0; byte < 2; ++byte)
      for (int64_t k0 = 0; k0 < Kp; k0 += kb) {
        int64_t n = std::min(kb, Kp - k0);
        kern.run({rows, np, n, w + k0 * M + row0 * n, bq + byte * kq + k0 / 2, acc, np, prefetch_b});
        add_shifted_s32_avx512(sum, acc, rows * np, 8 * byte);  // the pairs kernel's ISA has AVX-512F
      }
    return sum;
  }
};

// Tasks of an implicit conv: (block of mb output channels, batch row, group, chunk of kPositions
// virtual positions); the channel split only when there are few position chunks (late layers:
// 7 x 7 outputs, hundreds of channels). Channel blocks are the slowest index: parallel_for gives
// each thread a contiguous run of tasks, and with chunks the fastest, ResNet-18's 14 x 14
// layers (chunks of 64, 64 | 64, 32 positions) split 128 | 96 between two threads; by channel
// block each thread takes every chunk. (Chunks narrower than 64 to even out the positions cost
// more than they saved: the 6 x 64 tile then runs part empty.)
//
// With `threads` > 1, a layer whose position tasks do not split evenly over the threads (OCR
// rec's 240-channel 1x1 convs: 15 chunks, 8 | 7) or whose last chunk is short (480 positions:
// 256 | 224) is split by channel block too, one block a thread where each keeps 24 channels or
// more: each thread then takes every position of its channels, the same work. (Which thread
// computes an output never changes its value.)
struct ImplicitTasks {
  int64_t P, chunks, bgc, mb, mblocks, count;
  // Channel blocks are multiples of the kernel's tile rows: 6 (VNNI), 16 with amx (the AMX tiles).
  ImplicitTasks(int64_t batch_groups, int64_t P_, int64_t mg, int threads = 1, bool amx = false)
      : P(P_), chunks(ceil_div(P_, kPositions)), bgc(batch_groups * chunks), mb(mg) {
    const bool uneven = bgc % threads != 0 || P % kPositions != 0;
    const int64_t a = amx ? 16 : 6;
    if (bgc < kMinTasks) mb = std::max<int64_t>(a, ceil_div(ceil_div(mg, ceil_div(kMinTasks, bgc)), a) * a);
    else if (threads > 1 && uneven && mg >= 4 * a * threads) {
      // Split by channel block only where that leaves the busiest thread less work: positions times
      // tiles of rows (a thread's run of position tasks is at most ceil(bgc / threads) chunks).
      const int64_t mc = ceil_div(ceil_div(mg, threads), a) * a;
      const int64_t by_positions = ceil_div(bgc, threads) * kPositions * ceil_div(mg, a);
      const int64_t by_channels = batch_groups * P * ceil_div(mc, a);
      if (by_channels < by_positions) mb = mc;
    }
    mblocks = ceil_div(mg, mb);
    count = bgc * mblocks;
  }
  // Task t: batch-group index, first position and count (nq <= kPositions), first output channel
  // (within the group).
  void decode(int64_t t, int64_t& bg, int64_t& p0, int64_t& nq, int64_t& m0) const {
    m0 = t / bgc * mb;
    bg = t % bgc / chunks;
    p0 = t % bgc % chunks * kPositions;
    nq = std::min(kPositions, P - p0);
  }
};

// 16-bit codes with int8 weights on the u8 x s8 quads kernel (PackedWeights::byte_planes): the
// codes' two byte planes as quad planes (QuadInput), each plane's sums exact in int32 (bytes in
// [0, 255] times int8: 255 * 128 * K < 2^31, gemm_path_applies), added in int64 as
// 2^8 sum uh w + sum ul w. vpdpbusd takes 64 products an instruction where the pairs kernel's
// vpdpwssd takes 32: twice the pairs kernel's rate on the same two planes.
//
// The 16-bit codes are split once, u = code ^ flip (0x8000 for int16 codes) = 2^8 uh + ul, into
// two byte arrays in the input's layout (split_bytes), and each becomes a QuadInput whose padding
// is that byte of u's zero point z_u: sum (u - z_u) w = 2^8 sum uh w + sum ul w - z_u sum w.
struct BytePlanes {
  int64_t zu;  // the zero point of u (as PairInput's)
  uint8_t* bytes;  // both byte arrays, [high | low] (this thread's buffer)
  QuadInput hi, lo;
  // The n codes xs (int16 or uint16: `type`, zero point z) in geo's input layout.
  BytePlanes(qref::QContext& c, const ref::ConvGeometry& geo, const WordPlanes& qp, const uint16_t* xs, int64_t n,
             DType type, int64_t z)
      : zu(z + (type == DType::Int16 ? 32768 : 0)),
        bytes(split_bytes(xs, n, type == DType::Int16 ? 0x8000 : 0, c.threads)),
        hi(c, geo, qp, bytes, zu >> 8),
        lo(c, geo, qp, bytes + n, zu & 255) {}
  // The op's input.
  BytePlanes(qref::QContext& c, const ref::ConvGeometry& geo, const WordPlanes& qp)
      : BytePlanes(c, geo, qp, static_cast<const uint16_t*>(c.in[0]->raw()), c.in[0]->numel(), c.in[0]->dtype(),
                   c.in_q[0].zero_point) {}
  static uint8_t* split_bytes(const uint16_t* xs, int64_t n, uint16_t flip, int threads) {
    constexpr int64_t chunk = 1 << 14;
    uint8_t* b = task_buffer<uint8_t, __LINE__>(static_cast<size_t>(2 * n));
    parallel_for(ceil_div(n, chunk), threads, [&](int64_t t) {  // (the quads kernel's ISA has AVX-512BW)
      const int64_t i = t * chunk;
      split_bytes_avx512(xs + i, flip, std::min(chunk, n - i), b + i, b + n + i);
    });
    return b;
  }
  // One task's sums: rows x np int64 (a task buffer, row stride np) of weight rows w
  // (pack_conv_quads) against np virtual positions from p0 of (batch row, group) bg.
  int64_t* sums(const GemmU8S8Kernel& kern, const WordPlanes& qp, int64_t bg, int64_t p0, const int8_t* w,
                int64_t rows, int64_t np, int64_t Kp) {
    const size_t n = static_cast<size_t>(ceil_div(rows, 16) * 16 * np);
    int32_t* acc = task_buffer<int32_t, __LINE__>(2 * n);
    const int32_t* sums[2] = {hi.gemm(kern, qp, bg, p0, w, rows, np, Kp, acc), lo.gemm(kern, qp, bg, p0, w, rows, np, Kp, acc + n)};
    const int shifts[2] = {8, 0};
    int64_t* sum = task_buffer<int64_t, __LINE__>(static_cast<size_t>(rows * np));
    byte_plane_sums_avx512(sum, sums, shifts, 2, rows * np);  // (the kernel's ISA)
    return sum;
  }
  // The same for 16-bit weights as byte planes on the AMX tiles (PackedWeights::w8_lo): w = 2^8 wh
  // + wl, sum u w = 2^16 sum uh wh + 2^8 (sum ul wh + sum uh wl) + sum ul wl, each sum exact in
  // int32 (u8 x s8: 255 128 K; u8 x u8: 255 255 K < 2^31, amx_conv_applies).
  int64_t* sums16(const WordPlanes& qp, int64_t bg, int64_t p0, const int8_t* wh, const int8_t* wl, int64_t rows,
                  int64_t np, int64_t Kp) {
    const size_t n = static_cast<size_t>(ceil_div(rows, 16) * 16 * np);
    int32_t* acc = task_buffer<int32_t, __LINE__>(4 * n);
    const int32_t* sums[4] = {hi.gemm(kGemmU8S8Amx, qp, bg, p0, wh, rows, np, Kp, acc),
                              lo.gemm(kGemmU8S8Amx, qp, bg, p0, wh, rows, np, Kp, acc + n),
                              hi.gemm(kGemmU8U8Amx, qp, bg, p0, wl, rows, np, Kp, acc + 2 * n),
                              lo.gemm(kGemmU8U8Amx, qp, bg, p0, wl, rows, np, Kp, acc + 3 * n)};
    const int shifts[4] = {16, 8, 8, 0};
    int64_t* sum = task_buffer<int64_t, __LINE__>(static_cast<size_t>(rows * np));
    byte_plane_sums_avx512(sum, sums, shifts, 4, rows * np);
    return sum;
  }
};

// One task of a 16-bit layer whose packed rows form `groups` groups of rows_per_group: its (batch
// row, group) bg, virtual positions [p0, p0 + nq) (np: nq padded to the kernel's width), rows
// [r0, r0 + rows) of its group, and their int64 sums (rows x np): on the pairs kernel (PairInput;
// pw: pack_conv_pairs) or on the byte planes (BytePlanes; pw.byte_planes, pw.w8: pack_conv_quads).
struct WideTile {
  int64_t bg, p0, nq, r0, rows, np;
  int64_t* sum;
  WideTile(const ImplicitTasks& tasks, int64_t task, PairInput& in, const WordPlanes& qp, const PackedWeights& pw,
           int64_t groups, int64_t rows_per_group)
      : WideTile(tasks, task, pw.pairs->n_align, rows_per_group) {
    sum = in.sums(*pw.pairs, qp, bg, p0, pw.w16[0].data(), pw.rows, bg % groups * rows_per_group + r0, rows, np, pw.Kp,
                  pw.kb);
  }
  WideTile(const ImplicitTasks& tasks, int64_t task, BytePlanes& in, const WordPlanes& qp, const PackedWeights& pw,
           int64_t groups, int64_t rows_per_group)
      : WideTile(tasks, task, pw.u8->n_align, rows_per_group) {
    const int64_t w0 = (bg % groups * rows_per_group + r0) * pw.Kp;
    sum = pw.w8_lo.empty() ? in.sums(*pw.u8, qp, bg, p0, pw.w8.data() + w0, rows, np, pw.Kp)
                           : in.sums16(qp, bg, p0, pw.w8.data() + w0, pw.w8_lo.data() + w0, rows, np, pw.Kp);
  }

 private:
  WideTile(const ImplicitTasks& tasks, int64_t task, int64_t n_align, int64_t rows_per_group) {
    tasks.decode(task, bg, p0, nq, r0);
    np = ceil_div(nq, n_align) * n_align;
    rows = std::min(tasks.mb, rows_per_group - r0);
  }
};

// f(p, oh, ow, run) for each run of valid outputs (ow < OW) among virtual positions [p0, p0 + n)
// of phase width Wq: positions p .. p + run - 1 are outputs (oh, ow .. ow + run - 1).
template <class F>
void for_each_valid_run(int64_t p0, int64_t n, int64_t Wq, int64_t OW, F f) {
  for (int64_t p = p0; p < p0 + n;) {
    int64_t oh = p / Wq, ow = p % Wq, end = std::min(p0 + n, (oh + 1) * Wq);
    int64_t run = std::min(OW, ow + (end - p)) - ow;
    if (run > 0) f(p, oh, ow, run);
    p = end;
  }
}

}  // namespace

bool implicit_conv_applies(const QOp& op, const GemmU8S8Kernel& k) {
  const Tensor& w = qref::weighted(op).weight;
  return k.quads && op.is<params::Conv>() && (w.rank() == 3 || w.rank() == 4);
}

AlignedBytes pack_conv_quads(const Tensor& w, int64_t& Kp) {
  const int64_t M = w.dim(0), cg = w.dim(1), ks = w.numel() / std::max<int64_t>(M * cg, 1), CQ = ceil_div(cg, 4);
  Kp = CQ * ks * 4;
  AlignedBytes r(static_cast<size_t>(M * Kp), 0);
  const int8_t* src = w.data<int8_t>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t kk = 0; kk < ks; ++kk)
        r[static_cast<size_t>(m * Kp + ((ci / 4) * ks + kk) * 4 + ci % 4)] = src[(m * cg + ci) * ks + kk];
  return r;
}

// The pixel form for K x K windows (one group): the quads form reads their planes at offsets a
// tap's column off the 64-byte lines and computes the virtual positions past each output row's end
// (ResNet-18's 7 x 7 rows padded to 9, its 14 x 14 to 16); the pixel form reads whole aligned
// lines of weights and computes the valid positions only. 1x1 convs, whose quads reads are
// aligned and have no dropped positions, keep the quads form (it was faster on the OCR
// detector's: 20 x 20 x 384 channels 0.29 against 0.36 ms). Layers of 32-63 channels take it
// with tiles of 12 positions by 32 rows or 8 by 48 (24 accumulators, as 6 by 64), unless wide:
// their 8-bit codes then take the scalar epilogue (16-bit codes' byte planes have an int64 one).
// Zero-DCE's 32-channel 3x3 convs at 384 x 384: the non-wide ones 0.78-0.90 of the quads form's
// time, the wide ones 1.23-1.29; the OCR detector's 32-channel ones 0.73-0.85. Fewer channels
// keep the quads form (tiles of 16 rows: the detector's 24-channel 3x3 convs, padded to 32 rows,
// took 2.0 ms against 1.6 with 6-position tiles).
bool pixel_form_applies(const QOp& op, const GemmU8S8Kernel& k, int64_t M, int64_t K, bool byte_planes) {
  const Tensor& w = qref::weighted(op).weight;
  return k.pixels && op.node.attr_int("group", 1) == 1 &&
         (M >= 64 || (M >= 32 && (byte_planes || !qref::weighted(op).wide))) && w.dim(1) > 0 && K / w.dim(1) > 1;
}

bool amx_conv_applies(const QOp& op) {
  const Tensor& w = qref::weighted(op).weight;
  const bool conv = op.is<params::Conv>() && op.node.attr_int("group", 1) == 1 && (w.rank() == 3 || w.rank() == 4);
  const bool matmul = op.is<params::MatMul>() && w.rank() == 2;  // [N, K]: a 1x1 conv over K channels
  if (!(conv || matmul) || w.dim(1) < kAmxMinChannels || w.dim(0) < 16) return false;
  if (w.dtype() == DType::Int8) return true;
  // 16-bit weights as two byte planes: the low bytes' u8 x u8 sums exact in int32
  return w.dtype() == DType::Int16 && w.numel() / w.dim(0) * 255 * 255 < (int64_t{1} << 31);
}

AlignedBytes pack_conv_amx(const Tensor& w, int64_t& Kp, int byte) {
  const int64_t M = w.dim(0), cg = w.dim(1), ks = w.numel() / std::max<int64_t>(M * cg, 1);
  const int64_t CB = ceil_div(cg, 64), Mp = ceil_div(M, 16) * 16;
  Kp = CB * 64 * ks;  // a row's bytes: 16 rows of it are one block of ks x CB A tiles
  AlignedBytes r(static_cast<size_t>(Mp * Kp), 0);  // channels past cg, rows past M: weight 0
  // Row m, channel ci, tap kk -> block m / 16, tile (kk, ci / 64), row m % 16, byte ci % 64. The
  // channels run innermost, so each row's 64 bytes of a tile are stored one after another (a row's
  // cg x ks source values stay in L1).
  auto fill = [&](auto value) {
    for (int64_t m = 0; m < M; ++m) {
      int8_t* row = r.data() + m / 16 * 16 * Kp + m % 16 * 64;
      for (int64_t kk = 0; kk < ks; ++kk)
        for (int64_t cb = 0; cb < CB; ++cb) {
          int8_t* d = row + (kk * CB + cb) * 1024;
          const int64_t src = (m * cg + cb * 64) * ks + kk, n = std::min<int64_t>(64, cg - cb * 64);
          for (int64_t c = 0; c < n; ++c) d[c] = value(src + c * ks);
        }
    }
  };
  if (byte < 0) {
    const int8_t* w8 = w.data<int8_t>();
    fill([w8](int64_t i) { return w8[i]; });
  } else {
    // w = 2^8 hi + lo: hi = w >> 8 in [-128, 127], lo = w & 255 (stored as the byte it is)
    const int16_t* w16 = w.data<int16_t>();
    fill([w16, byte](int64_t i) {
      const auto v = static_cast<int64_t>(w16[i]);
      return static_cast<int8_t>(static_cast<uint8_t>(byte ? (v >> 8) & 255 : v & 255));
    });
  }
  return r;
}

bool amx_rows_applies(const QOp& op) {
  const Tensor& w = qref::weighted(op).weight;
  if (!op.is<params::Conv>() || op.node.attr_int("group", 1) != 1 || w.rank() != 4 || w.dtype() != DType::Int8) return false;
  const std::vector<int64_t> d = op.node.attr_ints("dilations");
  return w.dim(0) >= 16 && w.dim(1) <= 4 && w.dim(1) * w.dim(2) * w.dim(3) >= 64 && w.dim(3) <= 16 &&
         (d.size() < 2 || d[1] == 1);
}

AlignedBytes pack_conv_amx_rows(const Tensor& w, int64_t& Kp) {
  const int64_t M = w.dim(0), cg = w.dim(1), KH = w.dim(2), KW = w.dim(3), R = 4 * KW;
  Kp = KH * R;
  AlignedBytes r(static_cast<size_t>(ceil_div(M, 16) * 16 * Kp), 0);  // bytes past KW cg, rows past M: 0
  // Row m, channel ci, tap (kh, kw): byte kw of kernel row kh's quads, byte ci of it -> block
  // m / 16, tile kh, quad kw, column m % 16, byte ci (bytes past cg: 0).
  for (int64_t m = 0; m < M; ++m)
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          r[static_cast<size_t>((m / 16 * KH + kh) * R * 16 + kw * 64 + m % 16 * 4 + ci)] =
              w.data<int8_t>()[((m * cg + ci) * KH + kh) * KW + kw];
        }
  return r;
}

AlignedBytes pack_pixel_rows(const AlignedBytes& quads, int64_t M, int64_t Kp) {
  const int64_t Mp = ceil_div(M, 16) * 16, Kq = Kp / 4;
  AlignedBytes r(static_cast<size_t>(Mp * Kp), 0);  // rows past M: weight 0
  for (int64_t m0 = 0; m0 < Mp; m0 += 64) {
    const int64_t rows = std::min<int64_t>(64, Mp - m0);
    for (int64_t m = 0; m0 + m < M && m < rows; ++m)
      for (int64_t q = 0; q < Kq; ++q)
        std::memcpy(&r[static_cast<size_t>(m0 * Kp + (q * rows + m) * 4)], &quads[static_cast<size_t>((m0 + m) * Kp + q * 4)], 4);
  }
  return r;
}

std::vector<int16_t> pack_conv_pairs(const Tensor& w, int64_t& Kp, int64_t& kb, std::vector<int64_t>& sums) {
  const int64_t M = w.dim(0), cg = w.dim(1), ks = w.numel() / std::max<int64_t>(M * cg, 1), CP = ceil_div(cg, 2);
  Kp = CP * ks * 2;
  std::vector<int16_t> order(static_cast<size_t>(M * Kp), 0);  // rows in (pair, tap, c % 2) k order
  sums.assign(static_cast<size_t>(M), 0);
  int64_t wmax = 1;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t kk = 0; kk < ks; ++kk) {
        auto v = static_cast<int64_t>(w.get_f64((m * cg + ci) * ks + kk));
        order[static_cast<size_t>(m * Kp + ((ci / 2) * ks + kk) * 2 + ci % 2)] = static_cast<int16_t>(v);
        sums[static_cast<size_t>(m)] += v;
        wmax = std::max<int64_t>(wmax, std::llabs(v));
      }
  // Block length kb (even: a block ends on a word): each block's sum of products with bytes in
  // [0, 255] must be exact in int32, which holds when 255 * sum_block |w| < 2^31 for every row
  // (the kernel's int32 lanes wrap mod 2^32, so only the block's total must fit). The longest of
  // Kp, Kp / 2, ... that this layer's weights allow, else the bound for any weights, kb * 255 *
  // max|w| < 2^31. (Real 16-bit weights have sum |w| far below K max|w|: the OCR detector's
  // 96-channel 3x3 layers take one block instead of four.)
  auto fits = [&](int64_t b) {
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k0 = 0; k0 < Kp; k0 += b) {
        int64_t a = 0;
        for (int64_t k = k0; k < std::min(Kp, k0 + b); ++k) a += std::llabs(order[static_cast<size_t>(m * Kp + k)]);
        if (255 * a >= (int64_t{1} << 31)) return false;
      }
    return true;
  };
  kb = std::min(Kp, ((int64_t{1} << 31) - 1) / (255 * wmax) / 2 * 2);
  for (int64_t b = Kp; b > kb && b > 2; b = (b / 2 + 1) / 2 * 2)
    if (fits(b)) {
      kb = b;
      break;
    }
  // Block by block: block [k0, k0 + n) holds M rows of n values at k0 * M.
  std::vector<int16_t> r(order.size());
  for (int64_t k0 = 0; k0 < Kp; k0 += kb) {
    int64_t n = std::min(kb, Kp - k0);
    for (int64_t m = 0; m < M; ++m)
      std::copy_n(order.data() + m * Kp + k0, n, r.data() + k0 * M + m * n);
  }
  return r;
}

Tensor transpose_row_weights(const params::ConvTranspose& p) {
  int64_t ks = 1;
  for (int64_t v : p.kernel_shape.to_i64_vector()) ks *= v;
  const int64_t M = p.weight.dim(0), K = p.weight.dim(1);
  if (p.mg < 1 || M % p.mg || ks < 1 || K % ks) return Tensor();
  const int64_t groups = M / p.mg, cg = K / ks, R = p.mg * ks;
  Tensor rows(DType::Int64, {groups * R, cg, 1, 1});
  int64_t* d = rows.data<int64_t>();
  for (int64_t g = 0; g < groups; ++g)  // W[m][(ci - g cg) ks + k] (22), as the compiler stores it
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t r = 0; r < R; ++r)
        d[(g * R + r) * cg + ci] = static_cast<int64_t>(p.weight.get_f64(((g * p.mg + r / ks) * cg + ci) * ks + r % ks));
  return rows;
}

TransposeRows pack_transpose_rows(const params::ConvTranspose& p) {
  TransposeRows t;
  Tensor rows = transpose_row_weights(p);
  if (p.weight.dtype() != DType::Int8 || rows.empty_storage()) return t;
  t.groups = p.weight.dim(0) / p.mg;
  t.cg = rows.dim(1);
  t.R = rows.dim(0) / t.groups;
  t.Kp = ceil_div(t.cg, 4) * 4;
  t.a.assign(static_cast<size_t>(t.groups * t.R * t.Kp), 0);
  t.sum.assign(static_cast<size_t>(t.groups * t.R), 0);
  const int64_t* w = rows.data<int64_t>();
  for (int64_t r = 0; r < rows.dim(0); ++r)
    for (int64_t ci = 0; ci < t.cg; ++ci) {
      t.a[static_cast<size_t>(r * t.Kp + ci)] = static_cast<int8_t>(w[r * t.cg + ci]);
      t.sum[static_cast<size_t>(r)] += w[r * t.cg + ci];
    }
  return t;
}

namespace {
// out[i s] = codes[i] for i < n (restrict: 8-bit stores may alias anything, and the loop kept a
// division per element before: i % W, 5.5 ms of the OCR detector's 46).
template <typename T>
void scatter_strided(T* __restrict out, const T* __restrict codes, int64_t n, int64_t s) {
  if (s == 2)
    for (int64_t i = 0; i < n; ++i) out[2 * i] = codes[i];
  else
    for (int64_t i = 0; i < n; ++i) out[i * s] = codes[i];
}
// out[2 i] = even[i], out[2 i + 1] = odd[i]: two taps of a stride-2 row in one contiguous pass
// (GCC vectorizes it with byte permutes; two strided passes stored byte by byte).
template <typename T>
void interleave_pair(T* __restrict out, const T* __restrict even, const T* __restrict odd, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    out[2 * i] = even[i];
    out[2 * i + 1] = odd[i];
  }
}
}  // namespace

namespace {
// A ConvTranspose whose kernel tiles the output (kernel = stride, no dilation, pads or output
// padding, 1-D/2-D): its window t and the 1x1 stride-1 conv over its input that lays out the
// input words of the pointwise GEMM (rows r = (output channel mi, tap kk) of a group, k = input
// channel, columns = input pixels); false elsewhere.
bool tiled_transpose(const QOp& op, const Tensor& x, ref::TransposeWindow& t, ref::ConvGeometry& geo) {
  const auto& p = op.as<params::ConvTranspose>();
  Shape ws = {x.dim(1), p.mg};
  for (int64_t v : p.kernel_shape.to_i64_vector()) ws.push_back(v);
  if (ws.size() != 3 && ws.size() != 4) return false;
  t = ref::conv_transpose_window(op.node, x.shape(), ws);
  for (int i = 0; i < 3; ++i)  // the kernel tiles the output: one tap per output pixel
    if (t.k[i] != t.s[i] || t.d[i] != 1 || t.pb[i] != 0 || t.out[i] != t.in[i] * t.s[i]) return false;
  if (t.k[0] != 1) return false;
  geo.N = t.N;
  geo.C = t.C;
  geo.M = t.M;
  geo.group = t.M / t.mg;
  geo.cg = t.cg;
  geo.mg = t.mg;
  geo.w3 = ref::Window{t.in, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, t.in};
  geo.ks = 1;
  geo.in_plane = geo.out_plane = t.in[1] * t.in[2];
  return true;
}
}  // namespace

bool conv_transpose_tiled_u8(qref::QContext& c, const GemmU8S8Kernel& kern, const RequantFns& fns,
                             const TransposeRows* rows_at_load) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const auto& p = op.as<params::ConvTranspose>();
  if (!kern.quads || (x.dtype() != DType::UInt8 && x.dtype() != DType::Int8) || p.weight.dtype() != DType::Int8)
    return false;
  ref::TransposeWindow t;
  ref::ConvGeometry geo;
  if (!tiled_transpose(op, x, t, geo)) return false;
  TransposeRows local;
  const TransposeRows& tr = rows_at_load ? *rows_at_load : (local = pack_transpose_rows(p));
  const int64_t N = t.N, groups = t.M / t.mg, ks = t.k[1] * t.k[2], R = t.mg * ks, CQ = ceil_div(t.cg, 4), Kp = CQ * 4;
  const int64_t H = t.in[1], W = t.in[2], P = H * W, OH = t.out[1], OW = t.out[2];
  FP_CHECK(tr.groups == groups && tr.cg == t.cg && tr.R == R && tr.Kp == Kp, op.node.label(),
           ": packed weights do not fit the layer");
  const int8_t* a = tr.a.data();
  const int64_t* wsum = tr.sum.data();
  WordPlanes qp(geo, CQ);
  QuadInput in(c, geo, qp);
  const int64_t zu = in.zu;
  qref::ChannelRequant rq(c);
  Tensor& y = c.output(0, t.out_shape, false);  // every output pixel is one tap's
  const ImplicitTasks tasks(N * groups, P, R);
  qref::visit_int(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* yp = y.data<T>();
    parallel_for(tasks.count, c.threads, [&](int64_t task) {
      int64_t bg, p0, nq, r0;
      tasks.decode(task, bg, p0, nq, r0);
      int64_t b = bg / groups, g = bg % groups;
      int64_t np = ceil_div(nq, kern.n_align) * kern.n_align;
      int64_t rows = std::min(tasks.mb, R - r0);
      int32_t* acc = in.gemm(kern, qp, bg, p0, a + (g * R + r0) * Kp, rows, np, Kp);
      T* codes = task_buffer<T, __LINE__>(static_cast<size_t>(nq));
      T* odd = task_buffer<T, __LINE__>(static_cast<size_t>(nq));
      for (int64_t ri = 0; ri < rows; ++ri) {
        int64_t r = r0 + ri, m = g * t.mg + r / ks, kh = r % ks / t.k[2], kw = r % ks % t.k[2];
        requant_store(rq, fns, m, zu * wsum[g * R + r], acc + ri * np, nq, codes);
        if (t.s[2] == 2 && t.k[2] == 2 && kw == 0 && ri + 1 < rows) {
          // Rows r (kw 0) and r + 1 (kw 1) fill the same output row's even and odd columns.
          requant_store(rq, fns, m, zu * wsum[g * R + r + 1], acc + (ri + 1) * np, nq, odd);
          for (int64_t q = p0; q < p0 + nq;) {
            int64_t ih = q / W, end = std::min(p0 + nq, (ih + 1) * W);
            T* out = yp + ((b * t.M + m) * OH + ih * t.s[1] + kh) * OW + (q - ih * W) * 2;
            interleave_pair(out, codes + (q - p0), odd + (q - p0), end - q);
            q = end;
          }
          ++ri;
          continue;
        }
        // Input pixel (ih, iw) lands on output (ih s_h + kh, iw s_w + kw).
        for (int64_t q = p0; q < p0 + nq;) {
          int64_t ih = q / W, end = std::min(p0 + nq, (ih + 1) * W);
          T* out = yp + ((b * t.M + m) * OH + ih * t.s[1] + kh) * OW + kw + (q - ih * W) * t.s[2];
          scatter_strided(out, codes + (q - p0), end - q, t.s[2]);
          q = end;
        }
      }
    });
  });
  return true;
}

bool conv_transpose_tiled_s16(qref::QContext& c, const PackedWeights& pw) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  if (!pw.pairs || (x.dtype() != DType::Int16 && x.dtype() != DType::UInt16)) return false;
  ref::TransposeWindow t;
  ref::ConvGeometry geo;
  if (!tiled_transpose(op, x, t, geo)) return false;
  const int64_t N = t.N, groups = t.M / t.mg, ks = t.k[1] * t.k[2], R = t.mg * ks;
  const int64_t W = t.in[2], OH = t.out[1], OW = t.out[2];
  FP_CHECK(pw.rows == groups * R && pw.K == t.cg, op.node.label(), ": packed weights do not fit the layer");
  WordPlanes qp(geo, ceil_div(t.cg, 2));
  PairInput in(c, geo, qp);
  qref::ChannelRequant rq(c);
  Tensor& y = c.output(0, t.out_shape, false);  // every output pixel is one tap's
  const ImplicitTasks tasks(N * groups, t.in[1] * qp.Wq, R);
  qref::visit_int(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* yp = y.data<T>();
    parallel_for(tasks.count, c.threads, [&](int64_t task) {
      const WideTile tile(tasks, task, in, qp, pw, groups, R);
      int64_t b = tile.bg / groups, g = tile.bg % groups;
      for (int64_t ri = 0; ri < tile.rows; ++ri) {
        int64_t r = tile.r0 + ri, m = g * t.mg + r / ks, kh = r % ks / t.k[2], kw = r % ks % t.k[2];
        int64_t* s = tile.sum + ri * tile.np;
        requant_wide_in_place(rq, pw.requant64, m, rq.bias[m] - in.zu * pw.w_sum64[static_cast<size_t>(g * R + r)], s,
                              tile.np);
        // Input pixel (ih, iw) lands on output (ih s_h + kh, iw s_w + kw).
        for_each_valid_run(tile.p0, tile.nq, qp.Wq, W, [&](int64_t p, int64_t ih, int64_t iw, int64_t run) {
          T* out = yp + ((b * t.M + m) * OH + ih * t.s[1] + kh) * OW + iw * t.s[2] + kw;
          const int64_t* v = s + (p - tile.p0);
          for (int64_t i = 0; i < run; ++i) out[i * t.s[2]] = static_cast<T>(v[i]);
        });
      }
    });
  });
  return true;
}

namespace {
// The pixel form of an implicit conv (pw.pixels): tasks of (batch row, block of 64 output
// channels, run of valid output positions q = oh OW + ow), each position's word offset in the
// planes (p = oh Wq + ow) given to the kernel, so no virtual position past a row's end is
// computed, and the task's codes go straight to the output (its positions are consecutive there).
struct PixelTask {
  int64_t b, m0, rows, rows_p, q0, nq;  // rows_p: rows rounded up to 16, the kernel's (past M: weight 0)
  const int64_t* off;
  int64_t next_rows;  // rows of the block the thread's next task reads (0: the same block or none)
  // The task's position-major sums (nq x rows_p) of the planes of `in`, into acc.
  void sums(const PackedWeights& pw, const WordPlanes& qp, QuadInput& in, int32_t* acc) const {
    const int64_t kq = pw.Kp / 4;
    const int8_t* a = pw.w8.data() + m0 * pw.Kp;
    pw.u8->pixels({rows_p, kq, a, in.word_pointers(qp, b, 0, kq), off, nq, acc, rows_p,
                   next_rows ? a + rows_p * pw.Kp : nullptr, ceil_div(next_rows, 16) * 16 * pw.Kp});
  }
};

template <class F>
void for_each_pixel_task(qref::QContext& c, const ref::ConvGeometry& geo, const WordPlanes& qp, F f) {
  const int64_t M = geo.M, OW = geo.w3.out[2], Q = geo.w3.out[1] * OW;
  // The kernel's tile: 6 positions of 64 rows, 12 of 32 (a layer of fewer channels: one block).
  const int64_t unit = pixel_tile_positions(ceil_div(M, 16) * 16);
  const int64_t mblocks = ceil_div(M, 64), tiles = ceil_div(Q, unit);
  // Position runs: at most 384 positions (64 tiles of 6), enough tasks for four a thread, and a
  // task count the threads divide (ResNet-18's 56 x 56 layers: 10 runs of 53 tiles, not 9 of 59
  // split 5 | 4).
  const int64_t per_run = std::max<int64_t>(1, geo.N * mblocks), t = c.threads;
  int64_t runs = std::max(ceil_div(tiles, 384 / unit), std::min(tiles, ceil_div(4 * t, per_run)));
  while (runs < tiles && per_run * runs % t != 0) ++runs;
  const int64_t run_q = ceil_div(tiles, runs) * unit;
  runs = ceil_div(Q, run_q);
  parallel_for(geo.N * mblocks * runs, c.threads, [&](int64_t task) {
    const int64_t b = task / (mblocks * runs), m0 = task / runs % mblocks * 64, q0 = task % runs * run_q;
    const int64_t rows = std::min<int64_t>(64, M - m0), nq = std::min(run_q, Q - q0);
    int64_t* off = task_buffer<int64_t, __LINE__>(static_cast<size_t>(nq));
    for (int64_t j = 0; j < nq; ++j) off[j] = ((q0 + j) / OW * qp.Wq + (q0 + j) % OW) * 4;
    // The next task (the same thread's, when the split gives it one) reads the next block's
    // weights after the last run of this one.
    const int64_t next_rows = task % runs == runs - 1 && m0 + 64 < M ? std::min<int64_t>(64, M - m0 - 64) : 0;
    f(PixelTask{b, m0, rows, ceil_div(rows, 16) * 16, q0, nq, off, next_rows});
  });
}

// The pixel form on the byte planes of 16-bit codes (pw.byte_planes): each task's two
// position-major sums, then (13) of 2^8 hi + lo + bias - z_u sum w: a wide layer's in int64 lanes
// (requant_transposed_planes_avx512), a non-wide one's mod 2^32 in int32 lanes (its accumulator
// is within int32: _planes_s32_), where every channel meets their conditions, else the
// reference's RQ per output.
template <typename T>
void conv_pixels_planes(qref::QContext& c, const PackedWeights& pw, const ref::ConvGeometry& geo, const WordPlanes& qp,
                        BytePlanes& in, T* yp) {
  const qref::ChannelRequant rq(c);
  const int64_t M = geo.M, Q = geo.w3.out[1] * geo.w3.out[2];
  constexpr int64_t k61 = int64_t{1} << 61, k62 = int64_t{1} << 62;
  // Per channel (the caller thread's buffers): the bias with the z_u term, m and n, in int64 and
  // (non-wide layers) int32.
  int64_t* k64 = task_buffer<int64_t, __LINE__>(static_cast<size_t>(3 * M));
  int32_t* k32 = task_buffer<int32_t, __LINE__>(static_cast<size_t>(3 * M));
  const int64_t lo_z = rq.r.lo - rq.zy, hi_z = rq.r.hi - rq.zy;
  auto fits32 = [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
  bool vec = sizeof(T) <= 2 && lo_z >= -k62 && hi_z < k62;
  const bool narrow = !rq.wide && fits32(lo_z) && fits32(hi_z) && fits32(rq.zy);
  for (int64_t m = 0; m < M; ++m) {
    const int64_t b = k64[m] = rq.bias[m] - in.zu * pw.w_sum64[static_cast<size_t>(m)];
    k64[M + m] = rq.mult[m];
    k64[2 * M + m] = rq.shift[m];
    k32[m] = static_cast<int32_t>(static_cast<uint32_t>(b));  // mod 2^32
    k32[M + m] = static_cast<int32_t>(rq.mult[m]);
    k32[2 * M + m] = static_cast<int32_t>(rq.shift[m]);
    const bool m31 = rq.mult[m] > 0 && rq.mult[m] < (int64_t{1} << 31);
    // Wide: |sum| < 2^16 2^7 K < 2^61 for any K the GEMM path takes (gemm_path_applies: K < 2^16).
    vec = vec && m31 &&
          (narrow ? rq.shift[m] >= 1 && rq.shift[m] <= 62 : rq.wide && b > -k61 && b < k61 && rq.shift[m] >= 33 && rq.shift[m] <= 93);
  }
  for_each_pixel_task(c, geo, qp, [&](const PixelTask& t) {
    int32_t* hi = task_buffer<int32_t, __LINE__>(static_cast<size_t>(t.nq * t.rows_p));
    int32_t* lo = task_buffer<int32_t, __LINE__>(static_cast<size_t>(t.nq * t.rows_p));
    t.sums(pw, qp, in.hi, hi);
    t.sums(pw, qp, in.lo, lo);
    T* out = yp + (t.b * M + t.m0) * Q + t.q0;
    if (vec && narrow)
      return requant_transposed_planes_s32_avx512(hi, lo, t.rows_p, t.rows, t.nq, k32 + t.m0, k32 + M + t.m0,
                                                  k32 + 2 * M + t.m0, static_cast<int32_t>(lo_z), static_cast<int32_t>(hi_z),
                                                  static_cast<int32_t>(rq.zy), out, Q, static_cast<int>(sizeof(T)));
    if (vec)
      return requant_transposed_planes_avx512(hi, lo, t.rows_p, t.rows, t.nq, k64 + t.m0, k64 + M + t.m0,
                                              k64 + 2 * M + t.m0, lo_z, hi_z, rq.zy, out, Q, static_cast<int>(sizeof(T)));
    for (int64_t mi = 0; mi < t.rows; ++mi)
      for (int64_t j = 0; j < t.nq; ++j) {
        const int64_t i = j * t.rows_p + mi, s = int64_t{hi[i]} * 256 + lo[i];
        out[mi * Q + j] = static_cast<T>(rq(k64[t.m0 + mi] + s, t.m0 + mi));
      }
  });
}

// conv_implicit_s16 on the int64 sums of WideTile (in: PairInput or BytePlanes) over the planes qp.
template <class Input>
void conv_wide_sums(qref::QContext& c, const PackedWeights& pw, const ref::ConvGeometry& geo, const WordPlanes& qp,
                    Input& in) {
  qref::ChannelRequant rq(c);
  const int64_t N = geo.N, M = geo.M, group = geo.group, mg = geo.mg, OH = geo.w3.out[1], OW = geo.w3.out[2];
  Tensor& y = c.output(0, geo.out_shape, false);  // every element is written below
  const int64_t P = OH * qp.Wq;
  const int64_t zu = in.zu;
  const ImplicitTasks tasks(N * group, P, mg, c.threads, pw.amx);
  qref::visit_int(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* yp = y.data<T>();
    parallel_for(tasks.count, c.threads, [&](int64_t task) {
      const WideTile tile(tasks, task, in, qp, pw, group, mg);
      const int64_t p0 = tile.p0, nq = tile.nq, m0 = tile.r0, rows = tile.rows, np = tile.np;
      const int64_t b = tile.bg / group, g = tile.bg % group;
      int64_t* sum = tile.sum;
      // RQ (13) of the whole tile in place (dropped positions included: rows stay contiguous),
      // then the valid outputs stored.
      for (int64_t mi = 0; mi < rows; ++mi) {
        int64_t m = g * mg + m0 + mi;
        requant_wide_in_place(rq, pw.requant64, m, rq.bias[m] - zu * pw.w_sum64[static_cast<size_t>(m)],
                              sum + mi * np, np);
      }
      for_each_valid_run(p0, nq, qp.Wq, OW, [&](int64_t p, int64_t oh, int64_t ow, int64_t run) {
        for (int64_t mi = 0; mi < rows; ++mi) {
          int64_t m = g * mg + m0 + mi;
          const int64_t* s = sum + mi * np + (p - p0);
          T* out = yp + (b * M + m) * OH * OW + oh * OW + ow;
          for (int64_t i = 0; i < run; ++i) out[i] = static_cast<T>(s[i]);
        }
      });
    });
  });
}
}  // namespace

void conv_implicit_s16(qref::QContext& c, const PackedWeights& pw) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const Tensor& wt = qref::weighted(op).weight;
  ref::ConvGeometry geo = ref::conv_geometry(op.node, x.shape(), wt.shape());
  FP_CHECK(geo.w3.in[0] == 1 && geo.w3.kernel[0] == 1 && geo.cg * geo.ks == pw.K && geo.M == pw.rows,
           op.node.label(), ": packed weights do not fit the layer");
  if (pw.byte_planes) {
    WordPlanes qp(geo, ceil_div(geo.cg, 4), pw.amx);
    BytePlanes in(c, geo, qp);
    if (!pw.pixels) return conv_wide_sums(c, pw, geo, qp, in);
    FP_CHECK(geo.group == 1 && pw.u8->pixels, op.node.label(), ": packed weights do not fit the layer");
    Tensor& y = c.output(0, geo.out_shape, false);  // every element is written
    return qref::visit_int(y.dtype(), [&](auto tag) { conv_pixels_planes(c, pw, geo, qp, in, y.data<decltype(tag)>()); });
  }
  WordPlanes qp(geo, ceil_div(geo.cg, 2));
  PairInput in(c, geo, qp);
  conv_wide_sums(c, pw, geo, qp, in);
}

void matmul_pairs(qref::QContext& c, const PackedWeights& pw) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const int64_t N = pw.rows, K = pw.K;
  FP_CHECK(x.rank() >= 1 && x.dim(-1) == K, op.node.label(), ": input ", shape_str(x.shape()), " does not have ", K,
           " columns");
  Shape ys = x.shape();
  ys.back() = N;
  Tensor& y = c.output(0, ys, false);  // every element is written below
  const int64_t rows = x.numel() / std::max<int64_t>(K, 1);
  // The rows as the positions of a 1x1 conv over K channels: x transposed to [K][rows].
  uint16_t* xt = task_buffer<uint16_t, __LINE__>(static_cast<size_t>(K * rows));
  const auto* xb = static_cast<const uint16_t*>(x.raw());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < K; ++k) xt[k * rows + r] = xb[r * K + k];
  ref::ConvGeometry geo;
  geo.N = geo.group = 1;
  geo.C = geo.cg = K;
  geo.M = geo.mg = N;
  geo.w3 = ref::Window{{1, 1, rows}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, rows}};
  geo.ks = 1;
  geo.in_plane = geo.out_plane = rows;
  qref::ChannelRequant rq(c);
  // Each task's int64 sums (WideTile on in), (13) per channel, then its codes down the rows.
  auto run = [&](const WordPlanes& qp, auto& in) {
    const ImplicitTasks tasks(1, qp.Wq, N, 1, pw.amx);
    qref::visit_int(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* yp = y.data<T>();
      parallel_for(tasks.count, c.threads, [&](int64_t task) {
        const WideTile tile(tasks, task, in, qp, pw, 1, N);
        for (int64_t mi = 0; mi < tile.rows; ++mi) {
          int64_t m = tile.r0 + mi;
          int64_t* s = tile.sum + mi * tile.np;
          requant_wide_in_place(rq, pw.requant64, m, rq.bias[m] - in.zu * pw.w_sum64[static_cast<size_t>(m)], s, tile.np);
          for (int64_t i = 0; i < std::min(tile.nq, rows - tile.p0); ++i) yp[(tile.p0 + i) * N + m] = static_cast<T>(s[i]);
        }
      });
    });
  };
  if (pw.byte_planes) {  // int8 weights (or int16 ones on AMX): the codes' byte planes on the quads kernel
    WordPlanes qp(geo, ceil_div(K, 4), pw.amx);
    BytePlanes in(c, geo, qp, xt, K * rows, x.dtype(), c.in_q[0].zero_point);
    return run(qp, in);
  }
  WordPlanes qp(geo, ceil_div(K, 2));
  PairInput in(geo, qp, xt, x.dtype(), c.in_q[0].zero_point, c.threads);
  run(qp, in);
}

namespace {
// (13) of a task's position-major sums acc (nq positions of rows_p) of channels [m0, m0 + rows)
// into channel-major codes out[mi Q + j]: the transposing vector epilogue where the layer meets
// its conditions (consts: vector_requant_constants), else RQ per channel.
template <typename T>
void store_position_major(const PackedWeights& pw, const qref::ChannelRequant& rq, const int32_t* consts,
                          bool rows_epilogue, int64_t M, int64_t zu, const int32_t* acc, int64_t rows_p, int64_t rows,
                          int64_t m0, int64_t nq, T* out, int64_t Q) {
  if (rows_epilogue && pw.requant.transposed) {
    pw.requant.transposed(acc, rows_p, rows, nq, consts + m0, consts + M + m0, consts + 2 * M + m0,
                          static_cast<int32_t>(rq.r.lo - rq.zy), static_cast<int32_t>(rq.r.hi - rq.zy),
                          static_cast<int32_t>(rq.zy), out, Q, static_cast<int>(sizeof(T)));
    return;
  }
  int32_t* row = task_buffer<int32_t, __LINE__>(static_cast<size_t>(nq));
  for (int64_t mi = 0; mi < rows; ++mi) {
    for (int64_t j = 0; j < nq; ++j) row[j] = acc[j * rows_p + mi];
    requant_store(rq, pw.requant, m0 + mi, zu * pw.w8_sum[static_cast<size_t>(m0 + mi)], row, nq, out + mi * Q);
  }
}

// The rows form (pw.amx_rows, AmxRowsArgs): per batch row, the input in NHWC with its padding
// (z_u: shifted_zero_point) and u = code ^ flip; tasks of (batch row, block of 64 channels, run of output rows), each
// its sums on the tiles, then store_position_major.
template <typename T>
void conv_rows_amx_u8(qref::QContext& c, const PackedWeights& pw, const qref::ChannelRequant& rq,
                      const ref::ConvGeometry& geo, int64_t zu, const int32_t* consts, bool rows_epilogue, T* yp) {
  const Tensor& x = *c.in[0];
  const ref::Window& w = geo.w3;
  const int64_t N = geo.N, M = geo.M, cg = geo.cg, H = w.in[1], W = w.in[2], KH = w.kernel[1];
  const int64_t OH = w.out[1], OW = w.out[2], Q = OH * OW, pt = w.pad_begin[1], pl = w.pad_begin[2];
  const int64_t sh = w.stride[1], sw = w.stride[2], dh = w.dilation[1], R = pw.Kp / KH;
  const int64_t P = 4;  // bytes a pixel
  const uint8_t flip = x.dtype() == DType::Int8 ? 0x80 : 0;
  // Rows every tap reads; columns every valid position's R bytes read (KW pixels).
  const int64_t Hp = std::max(pt + H, (OH - 1) * sh + (KH - 1) * dh + 1);
  const int64_t Wp = std::max(pl + W, (OW - 1) * sw + ceil_div(R, P));
  const int64_t row_bytes = Wp * P, image = Hp * row_bytes;
  // Slack past the last row: the last tile of a row reads sixteen positions (up to 15 past OW).
  Scratch<uint8_t> xin(c.pool, static_cast<size_t>(N * image + 16 * sw * P + 64));
  std::memset(xin.data() + N * image, 0, static_cast<size_t>(16 * sw * P + 64));
  const auto* xb = static_cast<const uint8_t*>(x.raw());
  parallel_for(N * Hp, c.threads, [&](int64_t t) {
    const int64_t b = t / Hp, r = t % Hp, ih = r - pt;
    uint8_t* d = xin.data() + b * image + r * row_bytes;
    if (ih < 0 || ih >= H) return std::memset(d, static_cast<int>(zu), static_cast<size_t>(row_bytes)), void();
    std::memset(d, static_cast<int>(zu), static_cast<size_t>(pl * P));
    std::memset(d + (pl + W) * P, static_cast<int>(zu), static_cast<size_t>((Wp - pl - W) * P));
    // The quad planes' interleave: a pixel's channels in its four bytes (bytes past cg 0, weight 0)
    const uint8_t* src[4] = {};
    for (int64_t ci = 0; ci < cg; ++ci) src[ci] = xb + ((b * geo.C + ci) * H + ih) * W;
    quad_interleave_avx512(src, 1, flip, W, d + pl * P);
  });
  const int64_t mblocks = ceil_div(M, 64), rows_per = std::max<int64_t>(1, 384 / OW), runs = ceil_div(OH, rows_per);
  parallel_for(N * mblocks * runs, c.threads, [&](int64_t task) {
    const int64_t b = task / (mblocks * runs), m0 = task / runs % mblocks * 64, oh0 = task % runs * rows_per;
    const int64_t oh1 = std::min(OH, oh0 + rows_per), rows = std::min<int64_t>(64, M - m0), rows_p = ceil_div(rows, 16) * 16;
    const int64_t nq = (oh1 - oh0) * OW;
    int32_t* acc = task_buffer<int32_t, __LINE__>(static_cast<size_t>((nq + 16) * rows_p));  // position-major
    conv_rows_amx({xin.data() + b * image, row_bytes, sh, dh, sw * P, KH, R, pw.w8.data() + m0 * pw.Kp, rows_p / 16,
                   oh0, oh1, OW, acc, rows_p});
    store_position_major(pw, rq, consts, rows_epilogue, M, zu, acc, rows_p, rows, m0, nq, yp + (b * M + m0) * Q + oh0 * OW,
                         Q);
  });
}

template <typename T>
void conv_pixels_u8(qref::QContext& c, const PackedWeights& pw, const qref::ChannelRequant& rq,
                    const ref::ConvGeometry& geo, const WordPlanes& qp, QuadInput& in, const int32_t* consts,
                    bool rows_epilogue, T* yp) {
  const int64_t M = geo.M, Q = geo.w3.out[1] * geo.w3.out[2];
  for_each_pixel_task(c, geo, qp, [&](const PixelTask& t) {
    int32_t* acc = task_buffer<int32_t, __LINE__>(static_cast<size_t>(t.nq * t.rows_p));  // position-major
    t.sums(pw, qp, in, acc);
    store_position_major(pw, rq, consts, rows_epilogue, M, in.zu, acc, t.rows_p, t.rows, t.m0, t.nq,
                         yp + (t.b * M + t.m0) * Q + t.q0, Q);
  });
}
}  // namespace

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
  if (pw.amx_rows) {
    const int64_t zu = shifted_zero_point(c);
    return qref::visit_int(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      int32_t* consts = task_buffer<int32_t, __LINE__>(static_cast<size_t>(3 * M));
      const bool rows_epilogue = pw.requant.rows && sizeof(T) <= 2 &&
                                 vector_requant_constants(rq, 0, M, zu, pw.w8_sum.data(), consts, consts + M, consts + 2 * M);
      conv_rows_amx_u8(c, pw, rq, geo, zu, consts, rows_epilogue, y.data<T>());
    });
  }
  WordPlanes qp(geo, CQ, pw.amx);
  const int64_t P = OH * qp.Wq;
  QuadInput in(c, geo, qp);
  const int64_t zu = in.zu;

  const ImplicitTasks tasks(N * group, P, mg, c.threads, pw.amx);
  const GemmU8S8Kernel& kern = *pw.u8;
  qref::visit_int(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* yp = y.data<T>();
    // Per task: (13) over its nq sums of each channel at once (dropped positions included: one
    // vector epilogue per channel instead of one per output row; on ResNet-18's 7 x 7 layers,
    // seven calls of seven codes had been 8% slower), every channel in one call of the rows
    // epilogue where the layer meets its conditions (calls of 64 sums a channel had spent as much
    // on the call as on the sums). Where no position is dropped (Wq = OW: 1x1 convs) the codes go
    // straight to the output, else the valid runs are copied.
    // (The caller thread's buffer, read by every task of this op.)
    int32_t* consts = task_buffer<int32_t, __LINE__>(static_cast<size_t>(3 * M));
    const bool rows_epilogue = pw.requant.rows && sizeof(T) <= 2 &&
                               vector_requant_constants(rq, 0, M, zu, pw.w8_sum.data(), consts, consts + M, consts + 2 * M);
    if (pw.pixels) {
      FP_CHECK(group == 1 && pw.u8->pixels, op.node.label(), ": packed weights do not fit the layer");
      return conv_pixels_u8(c, pw, rq, geo, qp, in, consts, rows_epilogue, yp);
    }
    const bool direct = qp.Wq == OW;
    parallel_for(tasks.count, c.threads, [&](int64_t task) {
      int64_t bg, p0, nq, m0;
      tasks.decode(task, bg, p0, nq, m0);
      int64_t b = bg / group, g = bg % group;
      int64_t np = ceil_div(nq, kern.n_align) * kern.n_align;
      int64_t rows = std::min(tasks.mb, mg - m0);
      int32_t* acc = in.gemm(kern, qp, bg, p0, pw.w8.data() + (g * mg + m0) * Kp, rows, np, Kp);
      const int64_t m1 = g * mg + m0;  // the task's first channel
      T* out = yp + (b * M + m1) * OH * OW;
      T* codes = direct ? nullptr : task_buffer<T, __LINE__>(static_cast<size_t>(rows * np));
      T* dst = direct ? out + p0 : codes;
      const int64_t ld = direct ? OH * OW : np;
      if (rows_epilogue) {
        pw.requant.rows(acc, np, rows, nq, consts + m1, consts + M + m1, consts + 2 * M + m1,
                        static_cast<int32_t>(rq.r.lo - rq.zy), static_cast<int32_t>(rq.r.hi - rq.zy),
                        static_cast<int32_t>(rq.zy), dst, ld, static_cast<int>(sizeof(T)));
      } else {
        for (int64_t mi = 0; mi < rows; ++mi)
          requant_store(rq, pw.requant, m1 + mi, zu * pw.w8_sum[static_cast<size_t>(m1 + mi)], acc + mi * np, nq,
                        dst + mi * ld);
      }
      if (direct) return;
      for (int64_t mi = 0; mi < rows; ++mi)
        for_each_valid_run(p0, nq, qp.Wq, OW, [&](int64_t p, int64_t oh, int64_t ow, int64_t run) {
          std::memcpy(out + mi * OH * OW + oh * OW + ow, codes + mi * np + (p - p0), static_cast<size_t>(run) * sizeof(T));
        });
    });
  });
}

}  // namespace fixpoint::xk
