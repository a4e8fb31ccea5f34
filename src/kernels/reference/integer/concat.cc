// Integer Concat (19), docs/arithmetic.md §5.4.
#include "../common.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

void k_concat(QContext& c) {
  const QOp& op = c.op;
  const ref::ConcatGeometry g = ref::concat_geometry(c.in, op.node.attr_int("axis", 0), op.node);
  Tensor& y = c.output(0, g.ys);
  const int64_t outer = g.outer, inner = g.inner;
  fx::Range r = fx::range_of(c.out_q[0].type);
  int64_t zy = c.out_q[0].zero_point, at = 0, orow = g.ys[g.axis] * inner;
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  for (size_t k = 0; k < c.in.size(); ++k) {
    std::vector<int64_t> q = load_codes(*c.in[k], c.in_q[k].zero_point);
    const auto& p = op.as<params::Concat>();
    fx::Multiplier mu{p.mult.data<int64_t>()[k], static_cast<int>(p.shift.data<int64_t>()[k])};
    int64_t row = c.in[k]->dim(g.axis) * inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < row; ++j) yq[o * orow + at + j] = fx::requantize(q[o * row + j], mu, zy, r);
    at += row;
  }
  store_codes(y, yq);
}

}  // namespace fixpoint::qref
