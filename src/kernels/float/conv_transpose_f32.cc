// ConvTranspose, float32, on the fast path: per group, a GEMM of the weights (rows (m, kernel
// cell), packed once at prepare) by the input (rows of input channels, read in place), then a
// col2im that adds each column into the output pixel it lands on (o = i*s - pb + k*d, the ONNX
// definition). Every product sum over input channels is one fma chain (F1); the col2im adds them
// into the output in a fixed order (input pixel blocks in order, then kernel cells, then pixels),
// and each task owns a range of output channels, so any thread count and batch size give the
// same bits. The bias is added last.
#include <algorithm>
#include <numeric>

#include "../reference/common.h"
#include "fixpoint/task_buffer.h"
#include "f32_kernels.h"
#include "fast_float_ops.h"
#include "fixpoint/graph_match.h"
#include "fixpoint/parallel.h"

namespace fixpoint::fk {
namespace {

class ConvTransposeF32 final : public PreparedKernel {
 public:
  ConvTransposeF32(const F32Kernels* k, const Tensor& w, const Tensor* b, int64_t group)
      : k_(k), wshape_(w.shape()), group_(group) {
    C_ = wshape_[0];
    cg_ = C_ / group_;
    mg_ = wshape_[1];
    ks_ = w.numel() / (C_ * mg_);
    rows_ = mg_ * ks_;
    panels_ = (rows_ + kMR - 1) / kMR;
    // Output channels per task: a whole number of kMR-row panels.
    mc_ = std::lcm<int64_t>(ks_, kMR) / ks_;
    packed_.assign(static_cast<size_t>(group_ * panels_ * cg_ * kMR), 0.0f);
    const float* pw = w.data<float>();
    for (int64_t g = 0; g < group_; ++g)
      for (int64_t r = 0; r < rows_; ++r)
        for (int64_t ci = 0; ci < cg_; ++ci)
          packed_[((g * panels_ + r / kMR) * cg_ + ci) * kMR + r % kMR] = pw[(g * cg_ + ci) * rows_ + r];
    bias_.assign(static_cast<size_t>(group_ * mg_), 0.0f);
    if (b) std::copy(b->data<float>(), b->data<float>() + b->numel(), bias_.begin());
  }

  bool run(KernelContext& c) const override {
    const Tensor& x = c.in(0);
    if (x.dtype() != DType::Float32 || x.rank() != static_cast<int64_t>(wshape_.size())) return false;
    ref::TransposeWindow t = ref::conv_transpose_window(c.node, x.shape(), wshape_);
    if (t.cg != cg_ || t.mg != mg_ || t.C != C_) return false;
    Tensor& y = c.output(0, DType::Float32, t.out_shape);  // zero-filled: col2im adds into it
    const int64_t in_plane = t.in[0] * t.in[1] * t.in[2], out_plane = t.out[0] * t.out[1] * t.out[2];
    const int64_t NR = k_->nr;
    const int64_t cols = std::clamp<int64_t>((32768 / std::max<int64_t>(cg_, 1)) / NR * NR, NR, 256);
    const int64_t chunks = (mg_ + mc_ - 1) / mc_;
    const float* px = x.data<float>();
    float* py = y.data<float>();
    parallel_for(t.N * group_ * chunks, c.threads, [&](int64_t task) {
      int64_t ch = task % chunks, ng = task / chunks, g = ng % group_, n = ng / group_;
      int64_t m0 = ch * mc_, m1 = std::min(mg_, m0 + mc_), r0 = m0 * ks_, r1 = m1 * ks_;
      const float* xg = px + (n * C_ + g * cg_) * in_plane;
      float* yg = py + (n * group_ * mg_ + g * mg_) * out_plane;
      float* col = task_buffer<float, __LINE__>(static_cast<size_t>((r1 - r0) * cols), 0.0f);
      float* pack = task_buffer<float, __LINE__>(static_cast<size_t>(cg_ * NR));
      const float** rows = task_buffer<const float*, __LINE__>(static_cast<size_t>(cg_));
      for (int64_t p0 = 0; p0 < in_plane; p0 += cols) {
        int64_t nc = std::min(cols, in_plane - p0);
        for (int64_t j0 = 0; j0 < nc; j0 += NR) {
          int nr = static_cast<int>(std::min<int64_t>(NR, nc - j0));
          pointwise_rows(xg, cg_, in_plane, p0 + j0, nr, NR, rows, pack);
          for (int64_t r = r0; r < r1; r += kMR) {
            int mr = static_cast<int>(std::min<int64_t>(kMR, r1 - r));
            k_->gemm_indirect(cg_, packed_.data() + ((g * panels_ + r / kMR) * cg_) * kMR, rows, 0, nullptr, false,
                                   col + (r - r0) * cols + j0, cols, mr, nr, nullptr);
          }
        }
        scatter(t, col, cols, r0, r1, p0, nc, yg);
      }
      for (int64_t m = m0; m < m1; ++m) {
        float b = bias_[g * mg_ + m];
        float* ym = yg + m * out_plane;
        for (int64_t o = 0; o < out_plane; ++o) ym[o] = ym[o] + b;
      }
    });
    return true;
  }

 private:
  // y[m][o] += col[r - r0][p - p0] for rows r = (m, kernel cell) and input pixels p of the block.
  void scatter(const ref::TransposeWindow& t, const float* col, int64_t ld, int64_t r0, int64_t r1, int64_t p0,
               int64_t nc, float* yg) const {
    const Shape &in = t.in, &out = t.out, &k = t.k, &s = t.s, &d = t.d, &pb = t.pb;
    int64_t out_plane = out[0] * out[1] * out[2];
    for (int64_t r = r0; r < r1; ++r) {
      int64_t m = r / ks_, kk = r % ks_;
      int64_t kw = kk % k[2], kh = (kk / k[2]) % k[1], kd = kk / (k[2] * k[1]);
      float* ym = yg + m * out_plane;
      const float* cr = col + (r - r0) * ld;
      // Input pixels p0 .. p0 + nc - 1 one input row at a time (no division per element: three
      // of them per pixel cost 15 ms of the OCR detector's 2x2 stride-2 layer).
      for (int64_t p = p0; p < p0 + nc;) {
        int64_t iw0 = p % in[2], ih = (p / in[2]) % in[1], id = p / (in[2] * in[1]);
        int64_t end = std::min(p0 + nc, p - iw0 + in[2]);
        int64_t od = id * s[0] - pb[0] + kd * d[0], oh = ih * s[1] - pb[1] + kh * d[1];
        if (od >= 0 && od < out[0] && oh >= 0 && oh < out[1]) {
          float* yrow = ym + (od * out[1] + oh) * out[2];
          const float* c0 = cr + (p - p0);
          // Columns ow = iw s - pb + kw d inside [0, out[2]): iw in [lo, hi).
          int64_t base = kw * d[2] - pb[2];
          int64_t lo = base >= 0 ? 0 : (-base + s[2] - 1) / s[2];
          int64_t hi = out[2] - 1 - base < 0 ? 0 : (out[2] - 1 - base) / s[2] + 1;
          lo = std::max(lo, iw0);
          hi = std::min(hi, iw0 + (end - p));
          add_strided(yrow, base, c0, iw0, lo, hi, s[2]);
        }
        p = end;
      }
    }
  }

  // y[iw s + base] = y[iw s + base] + c[iw - iw0] for iw in [lo, hi) (the col2im's one
  // rounding per add).
  static void add_strided(float* __restrict y, int64_t base, const float* __restrict c, int64_t iw0, int64_t lo,
                          int64_t hi, int64_t s) {
    for (int64_t iw = lo; iw < hi; ++iw) y[iw * s + base] = y[iw * s + base] + c[iw - iw0];
  }

  const F32Kernels* k_;
  Shape wshape_;
  int64_t group_, C_ = 0, cg_ = 0, mg_ = 0, ks_ = 0, rows_ = 0, panels_ = 0, mc_ = 1;
  std::vector<float> packed_, bias_;
};

}  // namespace

std::unique_ptr<PreparedKernel> prepare_conv_transpose_f32(const Node& n, const Graph& g, const F32Kernels* k) {
  if (!k || n.inputs.size() < 2) return nullptr;
  const Tensor* w = match::constant(g, n.inputs[1]);
  if (!w || w->dtype() != DType::Float32 || w->rank() < 3 || w->rank() > 5 || w->numel() == 0) return nullptr;
  int64_t group = n.attr_int("group", 1);
  if (group < 1 || w->dim(0) % group != 0) return nullptr;
  const Tensor* b = nullptr;
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    b = match::constant(g, n.inputs[2]);
    if (!b || b->dtype() != DType::Float32 || b->numel() != group * w->dim(1)) return nullptr;
  }
  return std::make_unique<ConvTransposeF32>(k, *w, b, group);
}

}  // namespace fixpoint::fk
