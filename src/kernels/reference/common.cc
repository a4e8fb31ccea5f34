#include "common.h"

#include <cstring>

namespace fixpoint::ref {

int64_t norm_axis(int64_t axis, int64_t rank, const Node& n, const char* what) {
  FP_CHECK((axis >= -rank && axis < rank) || (rank == 0 && (axis == 0 || axis == -1)), n.label(), ": ", what, " ",
           axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

ConcatGeometry concat_geometry(const std::vector<const Tensor*>& in, int64_t axis, const Node& n) {
  FP_CHECK(!in.empty(), n.label(), ": needs at least one input");
  const Tensor& x0 = *in[0];
  const int64_t r = x0.rank();
  ConcatGeometry g;
  g.axis = norm_axis(axis, r, n);
  g.ys = x0.shape();
  g.ys[g.axis] = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    const Tensor& t = *in[k];
    FP_CHECK(t.rank() == r, n.label(), ": input ", k, " has rank ", t.rank(), ", expected ", r);
    for (int64_t d = 0; d < r; ++d)
      FP_CHECK(d == g.axis || t.dim(d) == x0.dim(d), n.label(), ": input ", k, " shape ", shape_str(t.shape()),
               " does not match ", shape_str(x0.shape()), " outside axis ", g.axis);
    g.ys[g.axis] += t.dim(g.axis);
  }
  for (int64_t d = 0; d < g.axis; ++d) g.outer *= g.ys[d];
  for (int64_t d = g.axis + 1; d < r; ++d) g.inner *= g.ys[d];
  return g;
}

Shape broadcast(const Shape& a, const Shape& b, const Node& n) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    FP_CHECK(da == db || da == 1 || db == 1, n.label(), ": shapes ", shape_str(a), " and ", shape_str(b),
             " cannot be broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

namespace {

// `n` elements of B bytes from src (stride `step` elements) to dst (contiguous).
template <size_t B>
void copy_row(const char* src, int64_t step, char* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * B, src + i * step * static_cast<int64_t>(B), B);
}

}  // namespace

void strided_copy(const void* src, int64_t base, const std::vector<int64_t>& strides, void* dst, const Shape& shape,
                  size_t bytes) {
  const int64_t n = shape_numel(shape), r = static_cast<int64_t>(shape.size()), es = static_cast<int64_t>(bytes);
  if (n == 0) return;
  const char* px = static_cast<const char*>(src);
  char* py = static_cast<char*>(dst);
  const int64_t inner = r ? shape[static_cast<size_t>(r - 1)] : 1, step = r ? strides[static_cast<size_t>(r - 1)] : 1;
  std::vector<int64_t> idx(static_cast<size_t>(std::max<int64_t>(r - 1, 0)), 0);
  int64_t off = base;
  for (int64_t o = 0; o < n; o += inner) {
    const char* s = px + off * es;
    char* d = py + o * es;
    if (step == 1) std::memcpy(d, s, static_cast<size_t>(inner * es));
    else if (bytes == 1) copy_row<1>(s, step, d, inner);
    else if (bytes == 2) copy_row<2>(s, step, d, inner);
    else if (bytes == 4) copy_row<4>(s, step, d, inner);
    else if (bytes == 8) copy_row<8>(s, step, d, inner);
    else
      for (int64_t i = 0; i < inner; ++i) std::memcpy(d + i * es, s + i * step * es, bytes);
    for (int64_t dim = r - 2; dim >= 0; --dim) {  // the next row's source offset
      size_t u = static_cast<size_t>(dim);
      if (++idx[u] < shape[u]) {
        off += strides[u];
        break;
      }
      off -= strides[u] * (shape[u] - 1);
      idx[u] = 0;
    }
  }
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  std::vector<int64_t> ist = strides_of(in);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 ? 0 : ist[i];
  return st;
}

std::vector<int64_t> ints_from_input_or_attr(const KernelContext& ctx, size_t input, const char* attr, bool* has) {
  const Tensor* t = ctx.input(input);
  if (t) {
    *has = true;
    return t->to_i64_vector();
  }
  *has = ctx.node.has_attr(attr);
  return ctx.node.attr_ints(attr);
}

SoftmaxRows softmax_rows(const Node& n, const Shape& s) {
  bool legacy = n.opset < 13;
  int64_t rank = static_cast<int64_t>(s.size());
  SoftmaxRows r;
  if (rank == 0) return r;
  int64_t axis = norm_axis(n.attr_int("axis", legacy ? 1 : -1), rank, n);
  for (int64_t d = 0; d < axis; ++d) r.outer *= s[d];
  for (int64_t d = axis; d < rank; ++d) (d == axis || legacy ? r.len : r.inner) *= s[d];
  return r;
}

Reduction plan_reduction(const Node& n, const Shape& xs, const std::vector<int64_t>& axes) {
  Reduction r;
  int64_t rank = static_cast<int64_t>(xs.size());
  r.noop = axes.empty() && n.attr_int("noop_with_empty_axes", 0);
  r.reduced.assign(xs.size(), axes.empty() && !r.noop);
  for (int64_t a : axes) r.reduced[norm_axis(a, rank, n, "axes entry")] = true;
  bool keepdims = n.attr_int("keepdims", 1) != 0;
  for (int64_t i = 0; i < rank; ++i) {
    r.kept_shape.push_back(r.reduced[i] ? 1 : xs[i]);
    if (!r.reduced[i] || keepdims) r.out_shape.push_back(r.reduced[i] ? 1 : xs[i]);
  }
  int64_t out_n = shape_numel(r.kept_shape);
  r.count = out_n ? shape_numel(xs) / out_n : 0;
  return r;
}

}  // namespace fixpoint::ref

namespace fixpoint::ref {

Window sliding_window(const Node& n, const Shape& x_shape, const Shape& kernel, bool allow_ceil_mode) {
  FP_CHECK(x_shape.size() >= 3, n.label(), ": input must be N x C x spatial..., got ", shape_str(x_shape));
  size_t r = x_shape.size() - 2;
  Window w;
  w.in.assign(x_shape.begin() + 2, x_shape.end());
  w.kernel = kernel.empty() ? n.attr_ints("kernel_shape") : kernel;
  FP_CHECK(w.kernel.size() == r, n.label(), ": kernel_shape has ", w.kernel.size(), " dims, input has ", r,
           " spatial dims");
  w.stride = n.attr_ints("strides", Shape(r, 1));
  w.dilation = n.attr_ints("dilations", Shape(r, 1));
  FP_CHECK(w.stride.size() == r && w.dilation.size() == r, n.label(), ": strides/dilations must have ", r, " values");
  std::vector<int64_t> pads = n.attr_ints("pads", Shape(2 * r, 0));
  FP_CHECK(pads.size() == 2 * r, n.label(), ": pads must have ", 2 * r, " values, got ", pads.size());
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  bool ceil_mode = allow_ceil_mode && n.attr_int("ceil_mode", 0) != 0;
  w.pad_begin.resize(r);
  w.pad_end.resize(r);
  w.out.resize(r);
  for (size_t i = 0; i < r; ++i) {
    FP_CHECK(w.kernel[i] >= 1, n.label(), ": kernel size must be >= 1, got ", w.kernel[i]);
    FP_CHECK(w.stride[i] >= 1, n.label(), ": stride must be >= 1, got ", w.stride[i]);
    FP_CHECK(w.dilation[i] >= 1, n.label(), ": dilation must be >= 1, got ", w.dilation[i]);
    FP_CHECK(w.kernel[i] <= (int64_t{1} << 20) && w.stride[i] <= (int64_t{1} << 20) && w.dilation[i] <= (int64_t{1} << 20),
             n.label(), ": absurd kernel/stride/dilation");
    int64_t ext = (w.kernel[i] - 1) * w.dilation[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t out = (w.in[i] + w.stride[i] - 1) / w.stride[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * w.stride[i] + ext - w.in[i]);
      int64_t small = total / 2;
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pad_end[i] = total - w.pad_begin[i];
      w.out[i] = out;
      continue;
    }
    FP_CHECK(auto_pad == "NOTSET" || auto_pad == "VALID", n.label(), ": unknown auto_pad '", auto_pad, "'");
    if (auto_pad == "NOTSET") {
      w.pad_begin[i] = pads[i];
      w.pad_end[i] = pads[i + r];
    }
    FP_CHECK(w.pad_begin[i] >= 0 && w.pad_end[i] >= 0, n.label(), ": pads must be >= 0, got ", w.pad_begin[i], ",",
             w.pad_end[i]);
    FP_CHECK(w.pad_begin[i] <= (int64_t{1} << 20) && w.pad_end[i] <= (int64_t{1} << 20), n.label(), ": absurd pads");
    int64_t span = w.in[i] + w.pad_begin[i] + w.pad_end[i] - ext;
    FP_CHECK(span >= 0, n.label(), ": window of extent ", ext, " does not fit input of size ", w.in[i], " with pads");
    int64_t out = (ceil_mode ? (span + w.stride[i] - 1) / w.stride[i] : span / w.stride[i]) + 1;
    // With ceil_mode the last window must start inside the input or left padding.
    if (ceil_mode && (out - 1) * w.stride[i] >= w.in[i] + w.pad_begin[i]) --out;
    w.out[i] = out;
  }
  return w;
}

int64_t padded_window_cells(const Window& w, const int64_t o3[3]) {
  int64_t padded = 1;
  for (int a = 0; a < 3; ++a) {
    int64_t cells = 0, start = o3[a] * w.stride[a] - w.pad_begin[a];
    for (int64_t kk = 0; kk < w.kernel[a]; ++kk) {
      int64_t pos = start + kk * w.dilation[a];
      if (pos >= -w.pad_begin[a] && pos < w.in[a] + w.pad_end[a]) ++cells;
    }
    padded *= cells;
  }
  return padded;
}

Window to_3d(Window w) {
  while (w.in.size() < 3) {
    for (Shape* v : {&w.in, &w.out, &w.kernel, &w.stride, &w.dilation}) v->insert(v->begin(), 1);
    w.pad_begin.insert(w.pad_begin.begin(), 0);
    w.pad_end.insert(w.pad_end.begin(), 0);
  }
  return w;
}

ColumnRange valid_columns(int64_t off, int64_t stride, int64_t in_w, int64_t out_w) {
  int64_t lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int64_t hi = in_w - 1 - off < 0 ? 0 : std::min(out_w, (in_w - 1 - off) / stride + 1);
  return {off, lo, std::max(lo, hi)};
}

ConvGeometry conv_geometry(const Node& n, const Shape& x, const Shape& w) {
  FP_CHECK(w.size() == x.size() && x.size() >= 3, n.label(), ": input ", shape_str(x), " and weights ", shape_str(w),
           " do not fit");
  FP_CHECK(x.size() <= 5, n.label(), ": more than 3 spatial dims are not supported");
  ConvGeometry g;
  g.group = n.attr_int("group", 1);
  g.N = x[0];
  g.C = x[1];
  g.M = w[0];
  FP_CHECK(g.group >= 1 && g.C % g.group == 0 && g.M % g.group == 0 && w[1] == g.C / g.group, n.label(), ": group ",
           g.group, " does not fit input channels ", g.C, " and weights ", shape_str(w));
  Shape kshape(w.begin() + 2, w.end());
  if (n.has_attr("kernel_shape"))
    FP_CHECK(n.attr_ints("kernel_shape") == kshape, n.label(), ": kernel_shape disagrees with weights ", shape_str(w));
  Window win = sliding_window(n, x, kshape, false);
  g.out_shape = {g.N, g.M};
  g.out_shape.insert(g.out_shape.end(), win.out.begin(), win.out.end());
  g.w3 = to_3d(win);
  g.cg = g.C / g.group;
  g.mg = g.M / g.group;
  const Shape &in = g.w3.in, &out = g.w3.out, &k = g.w3.kernel;
  g.in_plane = in[0] * in[1] * in[2];
  g.out_plane = out[0] * out[1] * out[2];
  g.ks = k[0] * k[1] * k[2];
  return g;
}

}  // namespace fixpoint::ref
