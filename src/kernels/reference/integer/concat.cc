// Integer Concat (19), docs/arithmetic.md §5.4.
#include "../common.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

void k_concat(QContext& c) {
  const QOp& op = c.op;
  const Tensor& x0 = *c.in[0];
  int64_t axis = ref::norm_axis(op.node.attr_int("axis", 0), x0.rank(), op.node);
  Shape ys = x0.shape();
  ys[axis] = 0;
  for (const Tensor* t : c.in) {
    FP_CHECK(t->rank() == x0.rank(), op.node.label(), ": inputs differ in rank");
    ys[axis] += t->dim(axis);
  }
  Tensor& y = c.output(0, ys);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= ys[d];
  for (int64_t d = axis + 1; d < x0.rank(); ++d) inner *= ys[d];
  fx::Range r = fx::range_of(c.out_q[0].type);
  int64_t zy = c.out_q[0].zero_point, at = 0, orow = ys[axis] * inner;
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  for (size_t k = 0; k < c.in.size(); ++k) {
    std::vector<int64_t> q = load_codes(*c.in[k], c.in_q[k].zero_point);
    const auto& p = op.as<params::Concat>();
    fx::Multiplier mu{p.mult.data<int64_t>()[k], static_cast<int>(p.shift.data<int64_t>()[k])};
    int64_t row = c.in[k]->dim(axis) * inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < row; ++j) yq[o * orow + at + j] = fx::requantize(q[o * row + j], mu, zy, r);
    at += row;
  }
  store_codes(y, yq);
}

}  // namespace fixpoint::qref
