// Integer ReduceSum / ReduceMean (31), docs/arithmetic.md §5.15.
#include "../common.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

// ReduceSum / ReduceMean (31): a = sum of (q - z) over the reduced axes (the reduction geometry
// of the float kernel, ref::plan_reduction), exact in int64; Sum: RQ(a) with M = s_x / s_y,
// Mean: R(a M / count) with the count dividing exactly (fx::requantize_mean).
void k_reduce(QContext& c) {
  const QOp& op = c.op;
  const auto& p = op.as<params::Reduce>();
  const Tensor& x = *c.in[0];
  FP_CHECK(x.numel() < (int64_t{1} << 36), op.node.label(), ": too many elements for an exact integer sum");
  std::vector<int64_t> axes = op.node.attr_ints("axes");
  if (!op.node.has_attr("axes") && c.in.size() > 1 && c.in[1]) axes = c.in[1]->to_i64_vector();
  ref::Reduction rd = ref::plan_reduction(op.node, x.shape(), axes);
  std::vector<int64_t> q = load_codes(x, c.in_q[0].zero_point);
  // (noop_with_empty_axes reduces no axis: the walk maps each element to itself, count 1)
  std::vector<int64_t> sum(static_cast<size_t>(shape_numel(rd.kept_shape)), 0);
  ref::for_each_reduced(x.shape(), rd, [&](int64_t i, int64_t o) { sum[o] += q[i]; });
  Tensor& y = c.output(0, rd.out_shape);
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  fx::Range r = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point, count = rd.count;
  std::vector<int64_t> yq(sum.size());
  for (size_t i = 0; i < sum.size(); ++i)
    yq[i] = p.mean ? fx::requantize_mean(sum[i], mu, std::max<int64_t>(count, 1), zy, r)
                   : fx::requantize_wide(sum[i], mu, zy, r);
  store_codes(y, yq);
}

}  // namespace fixpoint::qref
