// Integer GlobalMaxPool, docs/arithmetic.md §5.5.
#include "../common.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

void k_globalmaxpool(QContext& c) {
  const Tensor& x = *c.in[0];
  FP_CHECK(x.rank() >= 2, c.op.node.label(), ": input must be N x C x ...");
  Shape ys = {x.dim(0), x.dim(1)};
  for (int64_t i = 2; i < x.rank(); ++i) ys.push_back(1);
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> q = load_codes(x, 0);
  int64_t planes = x.dim(0) * x.dim(1), plane = planes ? x.numel() / planes : 0;
  std::vector<int64_t> yq(static_cast<size_t>(planes));
  for (int64_t p = 0; p < planes; ++p) yq[p] = plane ? *std::max_element(q.begin() + p * plane, q.begin() + (p + 1) * plane) : 0;
  store_codes(y, yq);
}

}  // namespace fixpoint::qref
