// MaxPool on integer codes (what a Move op of an 8- or 16-bit program runs, docs/arithmetic.md
// §5.7: max commutes with the monotone code map, so the pool runs on the codes) and on float32.
// The reference kernel visits each window element by element through its generic numeric type;
// this one keeps a running max per output row, tap by tap (ref::for_each_tap_row), in the
// element type. Max of codes is exact and order-free. For floats the taps of each output element
// arrive in the reference's window order and are kept by the reference's rule (a greater value,
// or the first NaN, replaces the best; start -Inf), so NaNs, signed zeros and empty windows give
// the reference's bits. Declines the Indices output.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "../reference/common.h"
#include "fast_float_ops.h"
#include "fixpoint/cpu_isa.h"
#include "fixpoint/parallel.h"
#include "fixpoint/task_buffer.h"
#include "maxpool_rows.h"

namespace fixpoint::fk {
namespace {
#include "maxpool_rows_impl.h"

// The plane loop for T on `isa` and plane g (maxpool_rows.h: floats per ISA; 8- and 16-bit codes the
// AVX-512 3 x 3 stride-2 loop where it applies; else the baseline's).
template <typename T>
PoolPlaneFn<T> plane_fn(const std::string& isa, const PoolPlane& g) {
  if constexpr (std::is_floating_point_v<T>) {
    if (isa == "avx512vnni") return kPoolPlaneF32Avx512;
    if (isa == "avx2") return kPoolPlaneF32Avx2;
  }
  if constexpr (std::is_integral_v<T> && sizeof(T) <= 2) {
    const bool stem = g.KH == 3 && g.KW == 3 && g.sy == 2 && g.sx == 2 && g.dh == 1 && g.dw == 1 && g.pt >= 0 &&
                      g.pt <= 1 && g.pl >= 0 && g.pl <= 1 && g.W <= kPool3x3s2MaxWidth &&
                      2 * g.OW + 2 <= kPool3x3s2MaxWidth + 64;
    if (isa == "avx512vnni" && stem) {
      if constexpr (std::is_same_v<T, int8_t>) return kPoolPlane3x3s2S8Avx512;
      if constexpr (std::is_same_v<T, uint8_t>) return kPoolPlane3x3s2U8Avx512;
      if constexpr (std::is_same_v<T, int16_t>) return kPoolPlane3x3s2S16Avx512;
      if constexpr (std::is_same_v<T, uint16_t>) return kPoolPlane3x3s2U16Avx512;
    }
  }
  return pool_plane<T>;
}

class MaxPoolFast final : public PreparedKernel {
 public:
  MaxPoolFast(const Node& n, std::string isa) : node_(n), isa_(std::move(isa)) {}
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
      if (planar) return pool_planar<T>(w3, px, py, x.dim(0) * x.dim(1), c.threads, isa_);
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
  // One 2-D plane per task (maxpool_rows_impl.h's pool_plane: the plane rewritten once as its
  // padded column phases, then every tap a contiguous run; the tap-row loop above took 0.8 ms
  // for ResNet-18's 8-bit MaxPool, 64 x 112 x 112 codes).
  template <typename T>
  static void pool_planar(const ref::Window& w, const T* px, T* py, int64_t planes, int threads,
                          const std::string& isa) {
    PoolPlane g{w.in[1], w.in[2], w.out[1], w.out[2], w.kernel[1], w.kernel[2], w.stride[1], w.stride[2],
                w.dilation[1], w.dilation[2], w.pad_begin[1], w.pad_begin[2], 0, 0};
    if (g.OH <= 0 || g.OW <= 0) return;
    g.Hp = (g.OH - 1) * g.sy + (g.KH - 1) * g.dh + 1;
    g.Wq = ((g.OW - 1) * g.sx + (g.KW - 1) * g.dw + 1 + g.sx - 1) / g.sx;  // columns per phase
    const PoolPlaneFn<T> fn = plane_fn<T>(isa, g);
    parallel_for(planes, threads, [&](int64_t nc) {
      T* buf = task_buffer<T, __LINE__>(static_cast<size_t>(g.sx * g.Hp * g.Wq));  // [phase][row][column]
      fn(g, px + nc * g.H * g.W, py + nc * g.OH * g.OW, buf);
    });
  }

  Node node_;
  std::string isa_;  // whose plane loops run
};

}  // namespace

std::unique_ptr<PreparedKernel> prepare_maxpool_fast_for(const Node& n, const std::string& isa) {
  return std::make_unique<MaxPoolFast>(n, isa);
}

std::unique_ptr<PreparedKernel> prepare_maxpool_fast(const Node& n, const Graph&) {
  return prepare_maxpool_fast_for(n, selected_isa());
}

}  // namespace fixpoint::fk
