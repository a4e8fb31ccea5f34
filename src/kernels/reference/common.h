// Helpers shared by the float reference kernels: dtype dispatch, broadcasting, axes.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "fixpoint/runtime.h"

namespace fixpoint::ref {

// Arithmetic type for a storage type: 16-bit floats compute in float.
template <typename T> struct Num { using C = T; static C load(T v) { return v; } static T store(C v) { return v; } };
template <> struct Num<Half> {
  using C = float;
  static C load(Half v) { return half_to_float(v.bits); }
  static Half store(C v) { return Half{float_to_half(v)}; }
};
template <> struct Num<BF16> {
  using C = float;
  static C load(BF16 v) { return bf16_to_float(v.bits); }
  static BF16 store(C v) { return BF16{float_to_bf16(v)}; }
};
struct BoolT { uint8_t v; };
template <> struct Num<BoolT> {
  using C = bool;
  static C load(BoolT v) { return v.v != 0; }
  static BoolT store(C v) { return BoolT{static_cast<uint8_t>(v)}; }
};

template <typename T> constexpr bool is_float_v = std::is_floating_point_v<typename Num<T>::C>;

// Calls f(T{}) with the storage type of `t`. Kinds: float types, integer types, bool.
template <typename F> void dispatch_float(DType t, const Node& n, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Float16: return f(Half{});
    case DType::BFloat16: return f(BF16{});
    default: fail(n.label(), ": dtype ", dtype_name(t), " is not supported (needs a float type)");
  }
}
template <typename F> void dispatch_numeric(DType t, const Node& n, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Float16: return f(Half{});
    case DType::BFloat16: return f(BF16{});
    case DType::Int8: return f(int8_t{});
    case DType::UInt8: return f(uint8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::UInt16: return f(uint16_t{});
    case DType::Int32: return f(int32_t{});
    case DType::UInt32: return f(uint32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::UInt64: return f(uint64_t{});
    default: fail(n.label(), ": dtype ", dtype_name(t), " is not supported (needs a numeric type)");
  }
}
template <typename F> void dispatch_all(DType t, const Node& n, F&& f) {
  if (t == DType::Bool) return f(BoolT{});
  dispatch_numeric(t, n, std::forward<F>(f));
}

// Axis in [-rank, rank) -> [0, rank); throws naming the node.
int64_t norm_axis(int64_t axis, int64_t rank, const Node& n, const char* what = "axis");

// Concat of `in` along `axis` (attribute value, any sign): the output shape and the output viewed
// as [outer, ys[axis] * inner] rows; input k fills columns [sum of earlier rows, + dim(axis) *
// inner). Checks ranks and the shapes outside the axis, naming the node.
struct ConcatGeometry {
  int64_t axis = 0, outer = 1, inner = 1;
  Shape ys;
};
ConcatGeometry concat_geometry(const std::vector<const Tensor*>& in, int64_t axis, const Node& n);

// Numpy-style broadcast of two shapes; throws naming the node.
Shape broadcast(const Shape& a, const Shape& b, const Node& n);

// Strides of `in` viewed at rank of `out` with 0 on broadcast dims.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Calls f(out_index, offsets...) for every element of `out` in C order, where offsets[k]
// is the element offset into input k (broadcast over `out`).
template <size_t K, typename F>
void for_each_broadcast(const Shape& out, const std::array<Shape, K>& ins, F&& f) {
  int64_t total = shape_numel(out);
  if (total == 0) return;
  size_t r = out.size();
  std::array<std::vector<int64_t>, K> st;
  for (size_t k = 0; k < K; ++k) st[k] = broadcast_strides(ins[k], out);
  std::vector<int64_t> idx(r, 0);
  std::array<int64_t, K> off{};
  int64_t inner = r ? out[r - 1] : 1;
  for (int64_t o = 0; o < total; o += inner) {
    for (int64_t j = 0; j < inner; ++j) {
      std::array<int64_t, K> cur;
      for (size_t k = 0; k < K; ++k) cur[k] = off[k] + (r ? j * st[k][r - 1] : 0);
      f(o + j, cur);
    }
    // advance the outer index (all dims but the last)
    for (int64_t d = static_cast<int64_t>(r) - 2; d >= 0; --d) {
      if (++idx[d] < out[d]) {
        for (size_t k = 0; k < K; ++k) off[k] += st[k][d];
        break;
      }
      for (size_t k = 0; k < K; ++k) off[k] -= st[k][d] * (out[d] - 1);
      idx[d] = 0;
    }
  }
}

// Row-major strides of a shape.
std::vector<int64_t> strides_of(const Shape& s);

// The data moves' copy (Transpose, Slice): element i of dst (shape, row-major) is element
// base + sum_d i_d strides[d] of src, elements of `bytes` bytes. Rows whose source stride is 1
// are one memcpy; others a loop of fixed-size copies (a memcpy call per element cost 2-5 ns).
void strided_copy(const void* src, int64_t base, const std::vector<int64_t>& strides, void* dst, const Shape& shape,
                  size_t bytes);

// A list of int64 from an optional input (opset >= N form) or an attribute (older form).
// Returns `has` = false when neither is given.
std::vector<int64_t> ints_from_input_or_attr(const KernelContext& ctx, size_t input, const char* attr, bool* has);

// Geometry of ReduceMax/Min/Mean/Sum over an input of shape xs, shared by the float and the
// integer kernels: `axes` (attribute or input; each in [-rank, rank)) are reduced, all of them
// when empty, none when empty with noop_with_empty_axes.
struct Reduction {
  bool noop = false;          // empty axes with noop_with_empty_axes: the output is the input
  std::vector<bool> reduced;  // per input axis
  Shape out_shape;            // the output's shape (keepdims applied)
  Shape kept_shape;           // the output's layout at the input's rank (reduced axes of size 1)
  int64_t count = 0;          // input elements per output element
};
Reduction plan_reduction(const Node& n, const Shape& xs, const std::vector<int64_t>& axes);

// Calls f(input index, output index) for every input element, in C order of the input.
template <typename F>
void for_each_reduced(const Shape& xs, const Reduction& r, F&& f) {
  int64_t total = shape_numel(xs);
  if (total == 0) return;
  std::vector<int64_t> ost = strides_of(r.kept_shape);
  std::vector<int64_t> idx(xs.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < total; ++i) {
    f(i, off);
    for (int64_t d = static_cast<int64_t>(xs.size()) - 1; d >= 0; --d) {
      if (++idx[d] < xs[d]) {
        if (!r.reduced[d]) off += ost[d];
        break;
      }
      if (!r.reduced[d]) off -= ost[d] * (xs[d] - 1);
      idx[d] = 0;
    }
  }
}

// The rows Softmax and LogSoftmax normalize, shared by the float and the integer kernel: `outer`
// x `len` x `inner`, the normalized axis strided by `inner`. Opset >= 13: one axis (default -1);
// opsets 1-12: the flattened tail from axis (default 1), i.e. inner = 1.
struct SoftmaxRows {
  int64_t outer = 1, len = 1, inner = 1;
};
SoftmaxRows softmax_rows(const Node& n, const Shape& s);

// Round half to even, as ONNX QuantizeLinear and Resize(nearest "round_prefer_even") need.
inline double round_half_even(double x) { return std::nearbyint(x); }

}  // namespace fixpoint::ref

namespace fixpoint::ref {

// Geometry of a sliding window op (Conv, pools) over the spatial dims of an N x C x ... tensor.
struct Window {
  Shape in, kernel, stride, dilation, pad_begin, pad_end, out;
  size_t rank() const { return in.size(); }
};

// Reads kernel_shape (or takes `kernel` when the op gets it from the weights), strides,
// dilations, pads, auto_pad and (pools) ceil_mode; validates them and computes output sizes.
Window sliding_window(const Node& n, const Shape& x_shape, const Shape& kernel, bool allow_ceil_mode);

// The same window with 1-D and 2-D geometry padded to 3-D (leading size-1 dims, stride and
// dilation 1, pads 0), so one loop nest serves every spatial rank.
Window to_3d(Window w);

// The output columns ow in [lo, hi) whose input column ow * stride + off lies in [0, in_w):
// the taps of one kernel column that read inside the input, with no per-element check.
struct ColumnRange {
  int64_t off, lo, hi;
};
ColumnRange valid_columns(int64_t off, int64_t stride, int64_t in_w, int64_t out_w);

// The rows one kernel cell (kd, kh, kw) of a 3-D window reads: calls f(out_row, in_row, cols) for
// every output row (od, oh) whose input row (id, ih) = (od s0 - p0 + kd d0, oh s1 - p1 + kh d1)
// lies inside the input, with out_row = od out[1] + oh, in_row = id in[1] + ih, and cols the
// output columns whose input column ow s2 + cols.off lies inside. The one loop nest of the direct
// convolutions (float, integer reference, the depthwise fast path).
template <typename F>
void for_each_tap_row(const Window& w, int64_t kd, int64_t kh, int64_t kw, F&& f) {
  ColumnRange cols = valid_columns(kw * w.dilation[2] - w.pad_begin[2], w.stride[2], w.in[2], w.out[2]);
  for (int64_t od = 0; od < w.out[0]; ++od) {
    int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
    if (id < 0 || id >= w.in[0]) continue;
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
      if (ih < 0 || ih >= w.in[1]) continue;
      f(od * w.out[1] + oh, id * w.in[1] + ih, cols);
    }
  }
}

// Calls f(id, ih, iw) for every cell of output (od, oh, ow)'s window (3-D window w) that lies
// inside the input, in window order (kd, then kh, then kw): the one window walk of the pools
// (float and integer reference MaxPool and AveragePool, the float and integer fast AveragePool).
template <typename F>
void for_each_window_cell(const Window& w, int64_t od, int64_t oh, int64_t ow, F&& f) {
  for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
    const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
    if (id < 0 || id >= w.in[0]) continue;
    for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
      const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
      if (ih < 0 || ih >= w.in[1]) continue;
      for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
        const int64_t iw = ow * w.stride[2] - w.pad_begin[2] + kw * w.dilation[2];
        if (iw >= 0 && iw < w.in[2]) f(id, ih, iw);
      }
    }
  }
}

// A Conv of input x [N, C, spatial...] with weights w [M, C/group, k...], checked (ranks, group,
// kernel_shape), its window padded to 3-D, and the output shape [N, M, spatial...]. Shared by the
// float, the integer reference and the optimized integer kernels.
struct ConvGeometry {
  int64_t N, C, M, group, cg, mg;
  Window w3;
  Shape out_shape;
  int64_t in_plane, out_plane, ks;  // elements of one input plane, output plane, kernel window
};
ConvGeometry conv_geometry(const Node& n, const Shape& x, const Shape& w);

// AveragePool's count_include_pad divisor for the window at output position o3 of a 3-D window:
// cells inside input + pads (cells beyond the end pad that ceil_mode adds are never counted).
int64_t padded_window_cells(const Window& w3, const int64_t o3[3]);

// ConvTranspose geometry (ONNX spec): out = stride*(in-1) + output_padding + (k-1)*dilation + 1
// - pads, or pads derived from output_shape / auto_pad. Spatial dims padded to 3-D.
// Resize/Upsample geometry, shared by the float and the integer kernel: per axis, per output
// coordinate, the (input index, weight) taps of the mode and coordinate transformation.
struct ResizeTap {
  int64_t index;  // -1: outside (tf_crop_and_resize extrapolation)
  double weight;
};
struct ResizePlan {
  Shape out;
  std::string mode, coord;  // "nearest" | "linear" | "cubic"; coordinate_transformation_mode
  double extrapolation = 0.0;
  std::vector<std::vector<std::vector<ResizeTap>>> taps;  // [axis][output coordinate] -> taps
};
// `inputs` as the node has them (roi/scales/sizes or Upsample's scales from index 1).
ResizePlan resize_plan(const Node& n, const Shape& x, const std::vector<const Tensor*>& inputs);

// Visits the outputs of a resize in C order: for output o, add(combo) for every combination of
// its per-axis taps (combo[d] points at axis d's tap; add returns false to stop o's taps), then
// end(o). Tap is ResizeTap or any type with the same meaning (the integer kernel's fixed-point
// weights).
template <typename Tap, typename Add, typename End>
void walk_resize(const Shape& out, const std::vector<std::vector<std::vector<Tap>>>& taps, Add&& add, End&& end) {
  size_t r = out.size();
  std::vector<int64_t> idx(r, 0), tap(r, 0);
  std::vector<const Tap*> combo(r);
  int64_t total = shape_numel(out);
  for (int64_t o = 0; o < total; ++o) {
    std::fill(tap.begin(), tap.end(), 0);
    while (true) {
      for (size_t d = 0; d < r; ++d) combo[d] = &taps[d][idx[d]][tap[d]];
      if (!add(combo)) break;
      int64_t d = static_cast<int64_t>(r) - 1;
      for (; d >= 0; --d) {
        if (++tap[d] < static_cast<int64_t>(taps[d][idx[d]].size())) break;
        tap[d] = 0;
      }
      if (d < 0) break;
    }
    end(o);
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
}

struct TransposeWindow {
  int64_t N = 0, C = 0, M = 0, cg = 0, mg = 0;  // batch, in/out channels, per group
  Shape out_shape;                               // [N, M, spatial...]
  Shape in, out, k, s, d, pb;                    // 3-D
};
TransposeWindow conv_transpose_window(const Node& n, const Shape& x, const Shape& w);

// acc[out_plane] += the scatter of batch row b's input channels of output channel m's group:
// acc[o] += x[i] * w[k] for every o = i*s - pb + k*d inside the output (the ONNX definition).
// x(c, i) reads input channel c at flat spatial index i; w(c, k) reads the weight of input
// channel c for output channel m at flat kernel index k. Shared by the float and integer kernels.
template <typename A, typename XAt, typename WAt>
void conv_transpose_scatter(const TransposeWindow& t, int64_t m, XAt x, WAt w, A* acc) {
  const Shape &in = t.in, &out = t.out, &k = t.k, &s = t.s, &d = t.d, &pb = t.pb;
  int64_t g = m / t.mg;
  for (int64_t ci = g * t.cg; ci < (g + 1) * t.cg; ++ci)
    for (int64_t id = 0; id < in[0]; ++id)
      for (int64_t ih = 0; ih < in[1]; ++ih)
        for (int64_t iw = 0; iw < in[2]; ++iw) {
          A xv = static_cast<A>(x(ci, (id * in[1] + ih) * in[2] + iw));
          for (int64_t kd = 0; kd < k[0]; ++kd) {
            int64_t od = id * s[0] - pb[0] + kd * d[0];
            if (od < 0 || od >= out[0]) continue;
            for (int64_t kh = 0; kh < k[1]; ++kh) {
              int64_t oh = ih * s[1] - pb[1] + kh * d[1];
              if (oh < 0 || oh >= out[1]) continue;
              for (int64_t kw = 0; kw < k[2]; ++kw) {
                int64_t ow = iw * s[2] - pb[2] + kw * d[2];
                if (ow < 0 || ow >= out[2]) continue;
                acc[(od * out[1] + oh) * out[2] + ow] += xv * static_cast<A>(w(ci, (kd * k[1] + kh) * k[2] + kw));
              }
            }
          }
        }
}

}  // namespace fixpoint::ref
