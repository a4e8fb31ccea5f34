// Conv, float32, on the fast path. Prepare: the constant weights of each group are packed once
// into kMR-row panels ([group][panel][k][kMR], k = (ci, kd, kh, kw) as the weights store them,
// rows past the group's channels zero). Run: per (batch row, group, block of output pixels), an
// indirection buffer gives, for each NR-column panel and tap (NR: the table's nr), a pointer to
// NR input values:
// the input row itself for 1x1 stride-1 convolutions and for interior panels of stride-1 ones
// (no im2col copy), a shared zero row for padding rows, and rows packed only for strided or
// border columns. 1-D/2-D convolutions that are not pointwise read no packed rows at all: the
// input is rewritten once into zero-padded stride-phase planes, and the GEMM runs over virtual
// output positions of the phase width, where every tap is a constant offset (phase_gemm, the
// float form of the integer implicit GEMM of src/kernels/x86/conv_implicit.cc). The table's
// 6 x NR microkernel computes every tile, one fma chain per output element
// (F1), and adds the bias after the chain, as the reference does. Depthwise convolutions run
// the direct plane kernel (no packing). Each output element is computed by the same chain
// whatever the block, the batch size or the thread count, so all of them give the same bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "../reference/common.h"
#include "../reference/unary_ops.h"
#include "fixpoint/task_buffer.h"
#include "f32_kernels.h"
#include "fast_float_ops.h"
#include "fixpoint/graph_match.h"
#include "fixpoint/parallel.h"

namespace fixpoint::fk {

void pointwise_rows(const float* x, int64_t K, int64_t stride, int64_t p, int64_t nr, int64_t NR, const float** rows,
                    float* pack) {
  for (int64_t k = 0; k < K; ++k) {
    const float* src = x + k * stride + p;
    if (nr == NR) {
      rows[k] = src;
      continue;
    }
    float* row = pack + k * NR;
    std::copy(src, src + nr, row);
    std::fill(row + nr, row + NR, 0.0f);
    rows[k] = row;
  }
}

namespace {

class ConvF32 final : public PreparedKernel {
 public:
  ConvF32(const F32Kernels* k, const Tensor& w, const Tensor* b, int64_t group) : k_(k), wshape_(w.shape()), group_(group) {
    M_ = wshape_[0];
    mg_ = M_ / group_;
    Kc_ = w.numel() / M_;
    panels_ = (mg_ + kMR - 1) / kMR;
    const float* pw = w.data<float>();
    // The depthwise plane kernel reads the weights as stored; other layers only the panels.
    if (wshape_[1] == 1 && mg_ == 1) {
      weights_.assign(pw, pw + w.numel());
      finite_ = std::all_of(weights_.begin(), weights_.end(), [](float v) { return std::isfinite(v); });
    }
    packed_.assign(static_cast<size_t>(group_ * panels_ * Kc_ * kMR), 0.0f);
    for (int64_t g = 0; g < group_; ++g)
      for (int64_t m = 0; m < mg_; ++m) {
        const float* src = pw + (g * mg_ + m) * Kc_;
        for (int64_t k = 0; k < Kc_; ++k) panel(g, m / kMR, k / kKc * kKc)[(k % kKc) * kMR + m % kMR] = src[k];
      }
    bias_.assign(static_cast<size_t>(M_ + kMR), 0.0f);  // + kMR: whole tiles read a last panel's 6 (phase_gemm)
    if (b) std::copy(b->data<float>(), b->data<float>() + M_, bias_.begin());
  }

  bool run(KernelContext& c) const override { return run_then(c, false); }

  // The conv, then (relu) Relu on its output (ref::ReluOp, as the Relu node's kernel): inside the
  // tiles' store where they store their outputs (phase_gemm in one K block), else a pass over y.
  bool run_then(KernelContext& c, bool relu) const {
    const Tensor& x = c.in(0);
    if (x.dtype() != DType::Float32 || x.rank() != static_cast<int64_t>(wshape_.size())) return false;
    ref::ConvGeometry geo = ref::conv_geometry(c.node, x.shape(), wshape_);
    Tensor& y = c.output(0, DType::Float32, geo.out_shape, false);  // every element written
    const ref::Window& w3 = geo.w3;
    // At most 2 spatial dims: the depth axis of the 3-D window is trivial.
    bool planar = w3.kernel[0] == 1 && w3.in[0] == 1 && w3.out[0] == 1 && w3.pad_begin[0] == 0;
    if (planar && geo.cg == 1 && geo.mg == 1)
      depthwise(geo, x.data<float>(), y.data<float>(), c.threads);
    else if (planar && !is_pointwise(geo))
      relu = !phase_gemm(geo, x.data<float>(), y.data<float>(), c.threads, relu) && relu;
    else
      gemm(geo, x.data<float>(), y.data<float>(), c.threads);
    if (relu) {
      float* p = y.data<float>();
      const ref::ReluOp op;
      for (int64_t i = 0; i < y.numel(); ++i) p[i] = op(p[i]);
    }
    return true;
  }

 private:
  // With finite weights, each plane is first copied into a zero-padded plane wide enough for
  // every output column's taps, so the plane kernel's vector loops cover the borders and the
  // columns past the last whole vector too (they ran element by element: 1.0 of the OCR
  // recognizer's 5x5 layers' 1.0 ms). The same bits: a padding tap adds w * (+0) = +-0 to the
  // chain, which changes a float sum only when that sum is -0, and a chain that starts at +0
  // never is (x + (-x) rounds to +0); w = +-Inf would make w * 0 = NaN, hence finite weights only.
  void depthwise(const ref::ConvGeometry& geo, const float* x, float* y, int threads) const {
    const ref::Window& w = geo.w3;
    const int64_t KH = w.kernel[1], KW = w.kernel[2], sh = w.stride[1], sw = w.stride[2], dh = w.dilation[1],
                  dw = w.dilation[2], IH = w.in[1], IW = w.in[2], OH = w.out[1], OW = w.out[2];
    // PW: room for one more whole vector past the last (DwPlane::vector_tail).
    const int64_t PH = (OH - 1) * sh + (KH - 1) * dh + 1, PW = (OW + 15) / 16 * 16 * sw + (KW - 1) * dw;
    const bool pad = finite_ && (w.pad_begin[1] > 0 || w.pad_begin[2] > 0 || OW % 16 != 0);  // 16: the widest vector
    parallel_for(geo.N * geo.M, threads, [&](int64_t nm) {
      int64_t m = nm % geo.M;
      const float* xp = x + nm * geo.in_plane;
      DwPlane p{xp, IH, IW, weights_.data() + m * geo.ks, KH, KW, sh, sw, dh, dw, w.pad_begin[1], w.pad_begin[2],
                y + nm * geo.out_plane, OH, OW, bias_[m]};
      if (pad) {
        float* buf = task_buffer<float, __LINE__>(static_cast<size_t>(PH * PW));
        const int64_t pl = std::min(w.pad_begin[2], PW), n = std::max<int64_t>(0, std::min(IW, PW - pl));
        for (int64_t r = 0; r < PH; ++r) {  // each row written once: zeros, the input's run, zeros
          const int64_t ih = r - w.pad_begin[1];
          float* row = buf + r * PW;
          if (ih < 0 || ih >= IH) {
            std::fill(row, row + PW, 0.0f);
            continue;
          }
          std::fill(row, row + pl, 0.0f);
          std::copy(xp + ih * IW, xp + ih * IW + n, row + pl);
          std::fill(row + pl + n, row + PW, 0.0f);
        }
        p.x = buf;
        p.IH = PH;
        p.IW = PW;
        p.ph = p.pw = 0;
        p.vector_tail = true;
      }
      k_->dwconv_plane(p);
    });
  }

  // The indirection rows of patch columns [p0, p0 + cols) of batch row n, group g: for column
  // panel j (NR columns) and k = (ci, kd, kh, kw), rows[j * Kc + k] points at NR floats holding
  // that tap for the panel's columns: the input row itself where the panel lies in one output row
  // and reads a contiguous run (stride 1), a shared zero row where the tap's input row is padding,
  // else a row packed into `pack` (strided or border columns, padding read as 0).
  void indirection(const ref::ConvGeometry& geo, const float* x, int64_t p0, int64_t cols, const float** rows,
                   float* pack) const {
    static const float kZeros[kMaxNR] = {};
    const int64_t NR = k_->nr;
    const ref::Window& w = geo.w3;
    const Shape &in = w.in, &out = w.out, &kern = w.kernel, &s = w.stride, &d = w.dilation, &pb = w.pad_begin;
    bool pointwise = is_pointwise(geo);
    for (int64_t j0 = 0; j0 < cols; j0 += NR) {
      int64_t nr = std::min<int64_t>(NR, cols - j0), p = p0 + j0;
      const float** r = rows + (j0 / NR) * Kc_;
      float* packed = pack + (j0 / NR) * Kc_ * NR;
      if (pointwise) {
        pointwise_rows(x, Kc_, geo.in_plane, p, nr, NR, r, packed);
        continue;
      }
      // Input coordinates of each column's window origin.
      int64_t bd[kMaxNR] = {}, bh[kMaxNR] = {}, bw[kMaxNR] = {};
      for (int64_t j = 0; j < nr; ++j) {
        int64_t q = p + j, ow = q % out[2], oh = (q / out[2]) % out[1], od = q / (out[2] * out[1]);
        bd[j] = od * s[0] - pb[0];
        bh[j] = oh * s[1] - pb[1];
        bw[j] = ow * s[2] - pb[2];
      }
      bool one_row = nr == NR && bd[0] == bd[nr - 1] && bh[0] == bh[nr - 1];
      // Every tap of every column inside the input: gather without bounds checks.
      bool interior = nr == NR;
      int64_t base[kMaxNR];
      for (int64_t j = 0; j < nr && interior; ++j) {
        interior = bd[j] >= 0 && bd[j] + (kern[0] - 1) * d[0] < in[0] && bh[j] >= 0 &&
                   bh[j] + (kern[1] - 1) * d[1] < in[1] && bw[j] >= 0 && bw[j] + (kern[2] - 1) * d[2] < in[2];
        base[j] = (bd[j] * in[1] + bh[j]) * in[2] + bw[j];
      }
      int64_t k = 0;
      for (int64_t ci = 0; ci < geo.cg; ++ci) {
        const float* xc = x + ci * geo.in_plane;
        for (int64_t kd = 0; kd < kern[0]; ++kd)
          for (int64_t kh = 0; kh < kern[1]; ++kh)
            for (int64_t kw = 0; kw < kern[2]; ++kw, ++k) {
              float* row = packed + k * NR;
              r[k] = row;
              int64_t id = bd[0] + kd * d[0], ih = bh[0] + kh * d[1], iw = bw[0] + kw * d[2];
              if (one_row && iw >= 0 && iw + (NR - 1) * s[2] < in[2]) {
                if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1]) {
                  r[k] = kZeros;
                  continue;
                }
                const float* src = xc + (id * in[1] + ih) * in[2] + iw;
                if (s[2] == 1)
                  r[k] = src;
                else
                  for (int64_t j = 0; j < NR; ++j) row[j] = src[j * s[2]];
                continue;
              }
              if (interior) {
                const float* src = xc + (kd * d[0] * in[1] + kh * d[1]) * in[2] + kw * d[2];
                for (int64_t j = 0; j < NR; ++j) row[j] = src[base[j]];
                continue;
              }
              for (int64_t j = 0; j < NR; ++j) {
                float v = 0.0f;
                if (j < nr) {
                  int64_t jd = bd[j] + kd * d[0], jh = bh[j] + kh * d[1], jw = bw[j] + kw * d[2];
                  if (jd >= 0 && jd < in[0] && jh >= 0 && jh < in[1] && jw >= 0 && jw < in[2])
                    v = xc[(jd * in[1] + jh) * in[2] + jw];
                }
                row[j] = v;
              }
            }
      }
    }
  }

  static bool is_pointwise(const ref::ConvGeometry& geo) {
    const ref::Window& w = geo.w3;
    const Shape &s = w.stride, &pb = w.pad_begin;
    return geo.ks == 1 && s[0] == 1 && s[1] == 1 && s[2] == 1 && pb[0] == 0 && pb[1] == 0 && pb[2] == 0 && w.in == w.out;
  }

  // 1-D/2-D convolutions without an indirection copy. Each input channel of a (batch row, group)
  // is written once, zero-padded to the window's reach, as its sy x sx stride phases (phase
  // (py, px) holds padded pixels (r sy + py, c sx + px), Hq x Wq of them). Output (oh, ow) at tap
  // (kh, kw) reads phase ((kh dh) % sy, (kw dw) % sx) at (oh + kh dh / sy, ow + kw dw / sx), so
  // over virtual positions p = oh Wq + ow (columns ow >= OW computed and dropped) the B row of
  // k = (ci, kh, kw) for the NR positions from p is the plane at p + a constant per k: K row
  // pointers per panel, nothing copied. Same k order and the same zeros for padding as gemm(),
  // so the same chains (F1) and the same bits.
  // True when the tiles applied Relu (relu, one K block).
  bool phase_gemm(const ref::ConvGeometry& geo, const float* x, float* y, int threads, bool relu) const {
    const ref::Window& w = geo.w3;
    const int64_t NR = k_->nr, sy = w.stride[1], sx = w.stride[2], OH = w.out[1], OW = w.out[2];
    const int64_t H = w.in[1], W = w.in[2], KH = w.kernel[1], KW = w.kernel[2];
    const int64_t Hq = ((OH - 1) * sy + (KH - 1) * w.dilation[1]) / sy + 1;
    const int64_t Wq = ((OW - 1) * sx + (KW - 1) * w.dilation[2]) / sx + 1;
    const int64_t plane = Hq * Wq, Pv = OH * Wq;
    // Only the phases some tap reads are written (a 1x1 stride-2 conv reads one of four): slot[ph]
    // is phase ph's place among a channel's planes, -1 where no tap reads it.
    std::vector<int64_t> slot(static_cast<size_t>(sy * sx), -1);
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        slot[static_cast<size_t>(kh * w.dilation[1] % sy * sx + kw * w.dilation[2] % sx)] = 0;
    int64_t phases = 0;
    for (int64_t& s : slot)
      if (s == 0) s = phases++;
    std::vector<int64_t> k_off(static_cast<size_t>(Kc_));
    for (int64_t ci = 0, k = 0; ci < geo.cg; ++ci)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw, ++k) {
          int64_t dy = kh * w.dilation[1], dx = kw * w.dilation[2];
          k_off[static_cast<size_t>(k)] =
              (ci * phases + slot[static_cast<size_t>(dy % sy * sx + dx % sx)]) * plane + dy / sy * Wq + dx / sx;
        }
    // A panel reads NR positions from p < Pv: past the last plane by at most Wq + NR floats.
    const int64_t per_ng = geo.cg * phases * plane + Wq + NR;
    const int64_t ng_count = geo.N * group_;
    // Each phase's columns c whose input column iw = c sx + ph % sx - pad lies inside [0, W):
    // [c0, c1), the same for every row.
    std::vector<int64_t> c0s(static_cast<size_t>(sx)), c1s(static_cast<size_t>(sx));
    for (int64_t px = 0; px < sx; ++px) {
      const int64_t off = px - w.pad_begin[2];
      c0s[static_cast<size_t>(px)] = std::clamp<int64_t>((-off + sx - 1) / sx, 0, Wq);
      c1s[static_cast<size_t>(px)] = std::clamp<int64_t>((W - off + sx - 1) / sx, c0s[static_cast<size_t>(px)], Wq);
    }
    // The calling thread's buffer, kept from call to call (task_buffer.h: fresh pages cost more
    // than filling them); the workers fill and read it inside this call only.
    float* planes = task_buffer<float, __LINE__>(static_cast<size_t>(ng_count * per_ng));
    parallel_for(ng_count * geo.cg, threads, [&](int64_t t) {
      int64_t ng = t / geo.cg, ci = t % geo.cg;
      const float* xc = x + ((ng / group_) * geo.C + (ng % group_) * geo.cg + ci) * geo.in_plane;
      float* dst = planes + ng * per_ng + ci * phases * plane;
      for (int64_t ph = 0; ph < sy * sx; ++ph) {
        if (slot[static_cast<size_t>(ph)] < 0) continue;
        const int64_t px = ph % sx, off = px - w.pad_begin[2];
        const int64_t c0 = c0s[static_cast<size_t>(px)], c1 = c1s[static_cast<size_t>(px)];
        for (int64_t r = 0; r < Hq; ++r) {
          float* row = dst + slot[static_cast<size_t>(ph)] * plane + r * Wq;
          int64_t ih = r * sy + ph / sx - w.pad_begin[1];
          if (ih < 0 || ih >= H) {
            std::fill(row, row + Wq, 0.0f);
            continue;
          }
          const float* src = xc + ih * W + off;
          std::fill(row, row + c0, 0.0f);
          if (sx == 1)
            std::copy(src + c0, src + c1, row + c0);
          else if (sx == 2)  // a loop the compiler vectorizes (the general one it does not)
            for (int64_t c = c0; c < c1; ++c) row[c] = src[2 * c];
          else
            for (int64_t c = c0; c < c1; ++c) row[c] = src[c * sx];
          std::fill(row + c1, row + Wq, 0.0f);
        }
      }
      if (ci == geo.cg - 1) std::fill(planes + ng * per_ng + geo.cg * phases * plane, planes + (ng + 1) * per_ng, 0.0f);
    });
    // Row k of (batch row, group) ng: its planes at k's offset; a tile of positions from p reads
    // them shifted by p (the microkernel's shift), so one list of Kc rows serves every tile.
    const float** rows = task_buffer<const float*, __LINE__>(static_cast<size_t>(ng_count * Kc_));
    for (int64_t ng = 0; ng < ng_count; ++ng)
      for (int64_t k = 0; k < Kc_; ++k) rows[ng * Kc_ + k] = planes + ng * per_ng + k_off[static_cast<size_t>(k)];
    const Tasks tp(*this, ng_count, Pv, threads);
    const int64_t cols = tp.cols;
    const size_t tile = static_cast<size_t>(tp.per_chunk * kMR * cols);
    parallel_for(tp.count, threads, [&](int64_t task) {
      int64_t ng, p0, nc, mp0, mp1;
      if (!tp.decode(task, Pv, ng, p0, nc, mp0, mp1)) return;
      int64_t g = ng % group_, n = ng / group_;
      const BRows b{rows + ng * Kc_, 0, p0, NR};
      float* yg = y + (n * M_ + g * mg_) * geo.out_plane;
      if (Kc_ <= kKc) {  // one K block: the tiles store their outputs themselves
        VirtualColumns* virt = task_buffer<VirtualColumns, __LINE__>(static_cast<size_t>(cols / NR));
        int64_t q = p0 % Wq, o = p0 / Wq * OW + std::min(q, OW);  // o: the next output's index
        for (int64_t t = 0; t * NR < nc; ++t) {
          VirtualColumns& v = virt[t];
          v = {0, o, relu};
          for (int64_t j = 0; j < NR && t * NR + j < nc; ++j, q = q + 1 == Wq ? 0 : q + 1)
            if (q < OW) v.columns |= 1u << j, ++o;
        }
        panels(g, mp0, mp1, b, nc, yg + mp0 * kMR * geo.out_plane, geo.out_plane, true, virt);
        return;
      }
      float* acc = task_buffer<float, __LINE__>(tile);  // the chunk's rows x cols virtual positions, row stride cols
      panels(g, mp0, mp1, b, nc, acc, cols, true);
      // The valid positions (ow < OW) of each output row the block covers.
      for (int64_t p = p0; p < p0 + nc;) {
        int64_t oh = p / Wq, ow = p % Wq, end = std::min(p0 + nc, (oh + 1) * Wq);
        int64_t run = std::min(OW, ow + (end - p)) - ow;
        for (int64_t m = mp0 * kMR; run > 0 && m < std::min(mg_, mp1 * kMR); ++m)
          std::copy_n(acc + (m - mp0 * kMR) * cols + (p - p0), run, yg + m * geo.out_plane + oh * OW + ow);
        p = end;
      }
    });
    return relu && Kc_ <= kKc;
  }

  void gemm(const ref::ConvGeometry& geo, const float* x, float* y, int threads) const {
    const int64_t P = geo.out_plane;
    const Tasks tp(*this, geo.N * group_, P, threads);
    const int64_t NR = k_->nr, cols = tp.cols;
    // Scratch per worker thread, kept from run to run (uninitialized: indirection() writes what
    // the microkernel reads).
    const size_t max_rows = static_cast<size_t>(((cols + NR - 1) / NR) * Kc_);
    parallel_for(tp.count, threads, [&](int64_t task) {
      float* pack = task_buffer<float, __LINE__>(max_rows * NR);
      const float** rows = task_buffer<const float*, __LINE__>(max_rows);
      int64_t ng, p0, nc, mp0, mp1;
      if (!tp.decode(task, P, ng, p0, nc, mp0, mp1)) return;
      int64_t g = ng % group_, n = ng / group_;
      indirection(geo, x + (n * geo.C + g * geo.cg) * geo.in_plane, p0, nc, rows, pack);
      panels(g, mp0, mp1, BRows{rows, Kc_, 0, 0}, nc, y + (n * M_ + g * mg_) * P + mp0 * kMR * P + p0, P);
    });
  }

  // The B rows of a block's tiles: tile t (NR positions) reads row k at
  // rows[t tile_stride + k] + shift + t shift_step (gemm(): a list per tile; phase_gemm: one
  // list, shifted along the planes).
  struct BRows {
    const float* const* rows;
    int64_t tile_stride, shift, shift_step;
  };

  // Tasks of a conv GEMM over P positions per (batch row, group): (range of weight panels, batch
  // row and group, block of positions); the panel ranges only split the work between threads,
  // never a chain. parallel_for hands each thread a contiguous run of tasks, so the work is made
  // to split evenly: blocks are whole NR-column tiles, sizes differing by at most one tile, their
  // count a multiple of the thread count (while there are tiles), and tasks run panel range by
  // panel range. (Blocks of a fixed width left ResNet-18's 14x14 layers, 7 tiles in blocks of 4
  // and 3, at 1.4x on two threads.) Up to 256 positions stay one block whatever the thread
  // count, the threads splitting the weight panels instead: split by columns, each thread
  // streamed all of its panels' weights once per block (ResNet-18's 7 x 7 layers, 9.4 MB of
  // weights for 64 positions: 0.83 -> 0.75 ms at two threads).
  struct Tasks {
    int64_t cols, tiles, blocks, total, mchunks, per_chunk, count, panels, NR;
    Tasks(const ConvF32& cv, int64_t batch_groups, int64_t P, int threads) : panels(cv.panels_), NR(cv.k_->nr) {
      // Columns per block: 32,768 B values of 256 k (up to 256 columns; at most 128 once K >= 256).
      const int64_t cmax = std::clamp<int64_t>((32768 / std::min<int64_t>(std::max<int64_t>(cv.Kc_, 1), 256)) / NR * NR, NR, 256);
      const int64_t t = std::max(threads, 1);
      tiles = std::max<int64_t>((P + NR - 1) / NR, 1);
      blocks = tiles * NR <= 256 ? 1 : std::min(tiles, ((tiles * NR + cmax - 1) / cmax + t - 1) / t * t);
      cols = (tiles + blocks - 1) / blocks * NR;  // the widest block
      total = batch_groups * blocks;
      mchunks = std::clamp<int64_t>((2 * t + total - 1) / total, 1, cv.panels_);
      per_chunk = (cv.panels_ + mchunks - 1) / mchunks;
      count = total * mchunks;
    }
    // Task i: its (batch row, group), first position and count, weight panels [mp0, mp1); false
    // when the range is empty.
    bool decode(int64_t i, int64_t P, int64_t& ng, int64_t& p0, int64_t& nc, int64_t& mp0, int64_t& mp1) const {
      int64_t mc = i / total, bt = i % total, b = bt % blocks;
      ng = bt / blocks;
      p0 = tiles * b / blocks * NR;
      nc = std::min(P, tiles * (b + 1) / blocks * NR) - p0;
      mp0 = mc * per_chunk;
      mp1 = std::min(panels, mp0 + per_chunk);
      return mp0 < mp1 && nc > 0;
    }
  };

  // Weight panels [mp0, mp1) of group g against nc positions whose B rows are `rows` (BRows: Kc_
  // rows per NR positions) into out (panel mp0's first row; row stride ldc). K is taken in
  // blocks of kKc, each chain continued from C (the same bits as one pass); the bias joins at
  // the last block. The blocks are long: every weight panel streams a block's kKc x 12 weights
  // in two runs, and with blocks of 256 (B's block of 128 KiB in L2) ResNet-18's 14 x 14 and
  // 7 x 7 layers, whose weights stream from memory, ran 14-18% slower than with 4,096 (1 thread,
  // alternating binaries; 512 and 1,024 in between, no blocking as 4,096); 8,192 keeps its
  // K = 4,608 layers in one block, whose tiles store their outputs directly (-3%).
  // whole: every tile is kMR x NR (out has room for them and B rows hold NR readable floats past
  // nc): the rows and columns past the layer's are computed and never read, and no tile takes
  // the microkernel's partial path (a copy through a stack tile at every k block: the last panel
  // of every layer whose channels are not a multiple of 6, and the last columns of every block).
  // virt (one K block only): column j of tile t stores as virt[t] says (VirtualColumns) into out,
  // the output plane of panel mp0's first channel (ldc: the plane's size), the layer's rows only.
  void panels(int64_t g, int64_t mp0, int64_t mp1, const BRows& rows, int64_t nc, float* out, int64_t ldc,
              bool whole = false, const VirtualColumns* virt = nullptr) const {
    const int64_t NR = k_->nr;
    for (int64_t k0 = 0; k0 < Kc_; k0 += kKc) {
      int64_t kk = std::min(kKc, Kc_ - k0);
      bool last = k0 + kk == Kc_;
      for (int64_t mp = mp0; mp < mp1; mp += 2) {  // two panels per tile where there are two
        const int64_t np = std::min<int64_t>(2, mp1 - mp);
        const float* a = panel(g, mp, k0);
        int mr = static_cast<int>(whole && !virt ? np * kMR : std::min<int64_t>(np * kMR, mg_ - mp * kMR));
        const float* bias = last ? bias_.data() + g * mg_ + mp * kMR : nullptr;
        auto tile = np == 2 ? k_->gemm_indirect_pair : k_->gemm_indirect;
        for (int64_t j0 = 0; j0 < nc; j0 += NR) {
          int nr = whole ? static_cast<int>(NR) : static_cast<int>(std::min<int64_t>(NR, nc - j0));
          const float* const* b = rows.rows + (j0 / NR) * rows.tile_stride + k0;
          const int64_t shift = rows.shift + j0 / NR * rows.shift_step;
          if (virt) {
            tile(kk, a, b, shift, bias, false, out + (mp - mp0) * kMR * ldc, ldc, mr, nr, virt + j0 / NR);
          } else {
            tile(kk, a, b, shift, bias, k0 > 0, out + (mp - mp0) * kMR * ldc + j0, ldc, mr, nr, nullptr);
          }
        }
      }
    }
  }

  // Panel mp of group g, k block k0 (kk = min(kKc, Kc - k0) rows of kMR weights). The packing
  // is [group][k block][panel][kk][kMR]: panels() passes every panel over one k block before the
  // next, so it reads the weights in memory order (one stream the prefetchers follow; with the
  // panels whole, a block read 6 KiB from each of up to a hundred places 110 KiB apart, and the
  // 7x7 layers of ResNet-18, whose 9.4 MB of weights come from DRAM, ran at half speed).
  float* panel(int64_t g, int64_t mp, int64_t k0) {
    return packed_.data() + (g * panels_ * Kc_ + k0 * panels_ + mp * std::min(kKc, Kc_ - k0)) * kMR;
  }
  const float* panel(int64_t g, int64_t mp, int64_t k0) const { return const_cast<ConvF32*>(this)->panel(g, mp, k0); }

  static constexpr int64_t kKc = 8192;  // k per block (panels()); the column blocks' budget assumes 256
  const F32Kernels* k_;
  Shape wshape_;
  int64_t group_, M_ = 0, mg_ = 0, Kc_ = 0, panels_ = 0;
  bool finite_ = false;  // depthwise weights all finite: the zero-padded plane applies
  std::vector<float> weights_, packed_, bias_;
};

}  // namespace

namespace {
// A Conv and the Relu reading its output (and nothing else reading it), run as one: the conv's
// prepared kernel with Relu applied as its tiles store (ConvF32::run_then). The Relu's bits:
// ref::ReluOp on each value, as the Relu node's kernel.
class ConvRelu final : public FusedKernel {
 public:
  ConvRelu(const Node& conv, const ConvF32& k) : conv_(conv), k_(k) {}
  size_t count() const override { return 2; }
  bool run(const std::function<const Tensor*(const std::string&)>& value, BufferPool* pool, int threads,
           Tensor& out) const override {
    std::vector<const Tensor*> ins;
    for (const std::string& in : conv_.inputs) ins.push_back(in.empty() ? nullptr : value(in));
    std::vector<Tensor> outs(conv_.outputs.size());
    KernelContext c(conv_, ins, outs, pool);
    c.threads = threads;
    if (!ins.at(0) || !k_.run_then(c, true)) return false;
    out = std::move(outs[0]);
    return true;
  }

 private:
  const Node& conv_;
  const ConvF32& k_;
};
}  // namespace

std::unique_ptr<FusedKernel> fuse_conv_relu(const Graph& g, const std::map<std::string, int>& uses,
                                            const std::vector<std::unique_ptr<PreparedKernel>>& prepared, size_t first) {
  if (first + 1 >= g.nodes.size() || first >= prepared.size()) return nullptr;
  const Node &conv = g.nodes[first], &relu = g.nodes[first + 1];
  const auto* k = dynamic_cast<const ConvF32*>(prepared[first].get());
  if (!k || conv.op_type != "Conv" || conv.outputs.size() != 1 || relu.op_type != "Relu" || relu.inputs.size() != 1 ||
      relu.inputs[0] != conv.outputs[0] || (!relu.domain.empty() && relu.domain != "ai.onnx"))
    return nullptr;
  auto u = uses.find(conv.outputs[0]);  // read by the Relu only (a graph output counts one more)
  if (u == uses.end() || u->second != 1) return nullptr;
  return std::make_unique<ConvRelu>(conv, *k);
}

std::unique_ptr<PreparedKernel> prepare_conv_f32(const Node& n, const Graph& g, const F32Kernels* k) {
  if (!k || n.inputs.size() < 2) return nullptr;
  const Tensor* w = match::constant(g, n.inputs[1]);
  if (!w || w->dtype() != DType::Float32 || w->rank() < 3 || w->rank() > 5 || w->dim(0) == 0) return nullptr;
  const Tensor* b = nullptr;
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    b = match::constant(g, n.inputs[2]);
    if (!b || b->dtype() != DType::Float32 || b->numel() != w->dim(0)) return nullptr;
  }
  int64_t group = n.attr_int("group", 1);
  if (group < 1 || w->dim(0) % group != 0) return nullptr;
  return std::make_unique<ConvF32>(k, *w, b, group);
}

}  // namespace fixpoint::fk
