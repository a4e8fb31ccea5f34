// Slice (opset < 10: starts/ends/axes attributes; later: inputs with optional axes and steps).
// Start/end clamping follows the ONNX spec, including negative steps.
#include <limits>

#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_slice(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset < 10) {
    starts = n.attr_ints("starts");
    ends = n.attr_ints("ends");
    axes = n.attr_ints("axes");
  } else {
    starts = c.in(1).to_i64_vector();
    ends = c.in(2).to_i64_vector();
    if (c.input(3)) axes = c.input(3)->to_i64_vector();
    if (c.input(4)) steps = c.input(4)->to_i64_vector();
  }
  FP_CHECK(starts.size() == ends.size(), n.label(), ": starts and ends differ in length");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  FP_CHECK(axes.size() == starts.size() && steps.size() == starts.size(), n.label(),
           ": starts, ends, axes and steps differ in length");
  int64_t r = x.rank();
  std::vector<int64_t> st(r, 0), step(r, 1);
  Shape ys = x.shape();
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = norm_axis(axes[i], r, n, "axes entry");
    FP_CHECK(!seen[a], n.label(), ": axis ", axes[i], " given twice");
    seen[a] = true;
    int64_t dim = x.dim(a), s = starts[i], e = ends[i], k = steps[i];
    FP_CHECK(k != 0, n.label(), ": step must not be 0");
    if (s < 0) s += dim;
    if (e < 0 && e > std::numeric_limits<int64_t>::min() / 2) e += dim;
    if (k > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      ys[a] = e > s ? (e - s + k - 1) / k : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      ys[a] = s > e ? (s - e + (-k) - 1) / (-k) : 0;
    }
    st[a] = s;
    step[a] = k;
  }
  Tensor& y = c.output(0, x.dtype(), ys);
  if (y.numel() == 0) return;
  std::vector<int64_t> xst = strides_of(x.shape()), src_step(r);
  int64_t base = 0;
  for (int64_t d = 0; d < r; ++d) {
    base += st[d] * xst[d];
    src_step[d] = step[d] * xst[d];
  }
  strided_copy(x.raw(), base, src_step, y.raw(), ys, dtype_size(x.dtype()));
}

}  // namespace

void register_slice(KernelRegistry& r) { r.add("Slice", k_slice); }

}  // namespace fixpoint::ref
