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
  Reduction rd = plan_reduction(n, x.shape(), ints_from_input_or_attr(c, 1, "axes", &has));
  if (rd.noop) {
    c.set_output(0, x);
    return;
  }
  int64_t out_n = shape_numel(rd.kept_shape);
  double init = R == Red::Max ? -std::numeric_limits<double>::infinity()
                : R == Red::Min ? std::numeric_limits<double>::infinity() : 0.0;
  std::vector<double> acc(out_n, init);
  for_each_reduced(x.shape(), rd, [&](int64_t i, int64_t off) {
    double v = x.get_f64(i);
    double& a = acc[off];
    if constexpr (R == Red::Max) a = (v > a || std::isnan(v)) ? v : a;
    else if constexpr (R == Red::Min) a = (v < a || std::isnan(v)) ? v : a;
    else a += v;
  });
  int64_t count = rd.count;
  Tensor& y = c.output(0, x.dtype(), rd.out_shape);
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
