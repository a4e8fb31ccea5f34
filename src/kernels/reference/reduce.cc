// ReduceMax/Min/Mean/Sum. Axes come from the attribute (ReduceSum opset < 13, others < 18)
// or the optional second input; empty axes reduce everything unless noop_with_empty_axes.
// Accumulation is in double, in increasing input order.
#include <limits>

#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

enum class Red { Max, Min, Mean, Sum };

template <Red R>
void reduce(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  bool has = false;
  std::vector<int64_t> axes = ints_from_input_or_attr(c, 1, "axes", &has);
  bool keepdims = n.attr_int("keepdims", 1) != 0;
  if (axes.empty() && n.attr_int("noop_with_empty_axes", 0)) {
    c.set_output(0, x);
    return;
  }
  std::vector<bool> red(x.rank(), axes.empty());
  for (int64_t a : axes) red[norm_axis(a, x.rank(), n, "axes entry")] = true;
  Shape ys, ys_keep;
  for (int64_t i = 0; i < x.rank(); ++i) {
    ys_keep.push_back(red[i] ? 1 : x.dim(i));
    if (!red[i] || keepdims) ys.push_back(red[i] ? 1 : x.dim(i));
  }
  int64_t out_n = shape_numel(ys_keep);
  double init = R == Red::Max ? -std::numeric_limits<double>::infinity()
                : R == Red::Min ? std::numeric_limits<double>::infinity() : 0.0;
  std::vector<double> acc(out_n, init);
  std::vector<int64_t> ost = strides_of(ys_keep);
  // Walk the input in C order, tracking the output offset of each element.
  std::vector<int64_t> idx(x.rank(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    double v = x.get_f64(i);
    double& a = acc[off];
    if constexpr (R == Red::Max) a = (v > a || std::isnan(v)) ? v : a;
    else if constexpr (R == Red::Min) a = (v < a || std::isnan(v)) ? v : a;
    else a += v;
    for (int64_t d = x.rank() - 1; d >= 0; --d) {
      if (++idx[d] < x.dim(d)) {
        if (!red[d]) off += ost[d];
        break;
      }
      if (!red[d]) off -= ost[d] * (x.dim(d) - 1);
      idx[d] = 0;
    }
  }
  int64_t count = out_n ? x.numel() / std::max<int64_t>(1, out_n) : 0;
  Tensor& y = c.output(0, x.dtype(), ys);
  for (int64_t i = 0; i < out_n; ++i) {
    double v = acc[i];
    if (R == Red::Mean) v = count ? v / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
    if (!dtype_is_float(x.dtype()) && std::isinf(v))
      v = v < 0 ? static_cast<double>(std::numeric_limits<int64_t>::lowest()) : static_cast<double>(std::numeric_limits<int64_t>::max());
    y.set_f64(i, v);
  }
}

}  // namespace

void register_reduce(KernelRegistry& r) {
  r.add("ReduceMax", reduce<Red::Max>);
  r.add("ReduceMin", reduce<Red::Min>);
  r.add("ReduceMean", reduce<Red::Mean>);
  r.add("ReduceSum", reduce<Red::Sum>);
}

}  // namespace fixpoint::ref
