// MaxPool on integer codes (what a Move op of an 8- or 16-bit program runs, docs/arithmetic.md
// §5.7: max commutes with the monotone code map, so the pool runs on the codes) and on float32.
// The reference kernel visits each window element by element through its generic numeric type;
// this one keeps a running max per output row, tap by tap (ref::for_each_tap_row), in the
// element type. Max of codes is exact and order-free. For floats the taps of each output element
// arrive in the reference's window order and are kept by the reference's rule (a greater value,
// or the first NaN, replaces the best; start -Inf), so NaNs, signed zeros and empty windows give
// the reference's bits. Declines the Indices output.
#include <algorithm>
#include <limits>
#include <vector>

#include "../reference/common.h"
#include "fast_float_ops.h"
#include "fixpoint/parallel.h"
#include "fixpoint/task_buffer.h"

namespace fixpoint::fk {
namespace {

class MaxPoolFast final : public PreparedKernel {
 public:
  explicit MaxPoolFast(const Node& n) : node_(n) {}
  bool run(KernelContext& c) const override {
    const Tensor& x = c.in(0);
    DType t = x.dtype();
    bool ok = t == DType::UInt8 || t == DType::Int8 || t == DType::UInt16 || t == DType::Int16 || t == DType::Float32;
    if (!ok || c.wants_output(1) || x.rank() < 3 || x.rank() > 5) return false;
    ref::Window w = ref::sliding_window(node_, x.shape(), {}, true), w3 = ref::to_3d(w);
    Shape ys = {x.dim(0), x.dim(1)};
    ys.insert(ys.end(), w.out.begin(), w.out.end());
    Tensor& y = c.output(0, t, ys, false);  // every element written
    int64_t in_plane = w3.in[0] * w3.in[1] * w3.in[2], out_plane = w3.out[0] * w3.out[1] * w3.out[2];
    int64_t s2 = w3.stride[2], ow_n = w3.out[2];
    bool planar = w3.kernel[0] == 1 && w3.in[0] == 1 && w3.out[0] == 1 && w3.pad_begin[0] == 0;
    auto pool = [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* py = y.data<T>();
      if (planar) return pool_planar<T>(w3, px, py, x.dim(0) * x.dim(1), c.threads);
      const int64_t rows = w3.in[0] * w3.in[1], half_w = (w3.in[2] + 1) / 2;
      parallel_for(x.dim(0) * x.dim(1), c.threads, [&](int64_t nc) {
        const T* xp = px + nc * in_plane;
        T* yp = py + nc * out_plane;
        // Stride 2 along rows: the plane's even and odd columns as two planes, so every tap reads
        // a contiguous run (input column off + 2 ow is column ow + off / 2 of off's parity) and
        // the loops below vectorize.
        std::vector<T> parity;
        if (s2 == 2) {
          parity.resize(static_cast<size_t>(2 * rows * half_w));
          for (int64_t r = 0; r < rows; ++r) {
            const T* xr = xp + r * w3.in[2];
            T *even = parity.data() + r * half_w, *odd = even + rows * half_w;
            for (int64_t j = 0; 2 * j < w3.in[2]; ++j) even[j] = xr[2 * j];
            for (int64_t j = 0; 2 * j + 1 < w3.in[2]; ++j) odd[j] = xr[2 * j + 1];
          }
        }
        // A window with no element: as the reference (-Inf for floats, the lowest code else).
        std::fill(yp, yp + out_plane,
                  std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest());
        for (int64_t kd = 0; kd < w3.kernel[0]; ++kd)
          for (int64_t kh = 0; kh < w3.kernel[1]; ++kh)
            for (int64_t kw = 0; kw < w3.kernel[2]; ++kw)
              ref::for_each_tap_row(w3, kd, kh, kw, [&](int64_t orow, int64_t irow, const ref::ColumnRange& cr) {
                T* yr = yp + orow * ow_n;
                const T* xr = xp + irow * w3.in[2] + cr.off;
                int64_t step = s2;
                if (s2 == 2) {
                  xr = parity.data() + ((cr.off & 1) * rows + irow) * half_w + (cr.off >> 1);
                  step = 1;
                }
                for (int64_t ow = cr.lo; ow < cr.hi; ++ow) yr[ow] = keep(yr[ow], xr[ow * step]);
              });
      });
    };
    switch (t) {
      case DType::UInt8: pool(uint8_t{}); break;
      case DType::Int8: pool(int8_t{}); break;
      case DType::UInt16: pool(uint16_t{}); break;
      case DType::Float32: pool(float{}); break;
      default: pool(int16_t{}); break;
    }
    return true;
  }

 private:
  // Kept by max (the reference's rule for floats: a greater value, or the first NaN).
  template <typename T>
  static T keep(T b, T v) {
    if constexpr (std::is_floating_point_v<T>)
      return (v > b || (v != v && b == b)) ? v : b;
    else
      return std::max(b, v);
  }

  // y[i] = keep(y[i], x[i]). Restrict pointers and a count by value: a store of 8-bit codes may
  // alias anything, and in the lambda below every iteration reloaded the row length (scalar
  // code, 2x slower than the tap-row loop this replaced).
  template <typename T>
  static void keep_row(T* __restrict y, const T* __restrict x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = keep(y[i], x[i]);
  }
  // Column j of a phase row: src[s j] (s = 2 spelled out, so that it vectorizes).
  template <typename T>
  static void take_columns(T* __restrict dst, const T* __restrict src, int64_t n, int64_t s) {
    if (s == 1)
      std::copy(src, src + n, dst);
    else if (s == 2)
      for (int64_t j = 0; j < n; ++j) dst[j] = src[2 * j];
    else
      for (int64_t j = 0; j < n; ++j) dst[j] = src[s * j];
  }

  // One 2-D plane per task: the plane rewritten once, padded with the lowest value (-Inf for
  // floats: no tap it replaces changes a max, and a window of padding only gives the reference's
  // empty-window value), as its sx column phases, so that every tap (kh, kw) of an output row is
  // one contiguous run of a phase row, ow + (kw dw) / sx of phase (kw dw) % sx; the output row is
  // the first tap's run, then kept against the others in the reference's window order (kh, then
  // kw). Every loop has unit stride and no bounds test, so they vectorize (the tap-row loop above
  // took 0.8 ms for ResNet-18's 8-bit MaxPool, 64 x 112 x 112 codes).
  template <typename T>
  static void pool_planar(const ref::Window& w, const T* px, T* py, int64_t planes, int threads) {
    const T low = std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    const int64_t H = w.in[1], W = w.in[2], OH = w.out[1], OW = w.out[2], KH = w.kernel[1], KW = w.kernel[2];
    const int64_t sy = w.stride[1], sx = w.stride[2], dh = w.dilation[1], dw = w.dilation[2];
    const int64_t pt = w.pad_begin[1], pl = w.pad_begin[2];
    const int64_t Hp = (OH - 1) * sy + (KH - 1) * dh + 1, Wp = (OW - 1) * sx + (KW - 1) * dw + 1;
    const int64_t Wq = (Wp + sx - 1) / sx;  // columns per phase
    if (OH <= 0 || OW <= 0) return;
    parallel_for(planes, threads, [&](int64_t nc) {
      const T* xp = px + nc * H * W;
      T* yp = py + nc * OH * OW;
      T* buf = task_buffer<T, __LINE__>(static_cast<size_t>(sx * Hp * Wq));  // [phase][row][column]
      for (int64_t r = 0; r < Hp; ++r) {
        int64_t ih = r - pt;
        for (int64_t q = 0; q < sx; ++q) {
          T* dst = buf + (q * Hp + r) * Wq;
          if (ih < 0 || ih >= H) {
            std::fill(dst, dst + Wq, low);
            continue;
          }
          // Column j of phase q is padded column q + sx j, input column q + sx j - pl.
          const T* src = xp + ih * W;
          int64_t lo = std::clamp<int64_t>((pl - q + sx - 1) / sx, 0, Wq);
          int64_t hi = std::clamp<int64_t>((W + pl - q + sx - 1) / sx, lo, Wq);
          std::fill(dst, dst + lo, low);
          take_columns(dst + lo, src + q + sx * lo - pl, hi - lo, sx);
          std::fill(dst + hi, dst + Wq, low);
        }
      }
      for (int64_t oh = 0; oh < OH; ++oh) {
        T* yr = yp + oh * OW;
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const T* xr = buf + ((kw * dw % sx) * Hp + oh * sy + kh * dh) * Wq + kw * dw / sx;
            if (kh == 0 && kw == 0) {
              // The reference starts from the lowest value: keep(low, v) is v for every v
              // (a NaN replaces -Inf; -Inf keeps -Inf).
              std::copy(xr, xr + OW, yr);
              continue;
            }
            keep_row(yr, xr, OW);
          }
      }
    });
  }

  Node node_;
};

}  // namespace

std::unique_ptr<PreparedKernel> prepare_maxpool_fast(const Node& n, const Graph&) {
  return std::make_unique<MaxPoolFast>(n);
}

}  // namespace fixpoint::fk
