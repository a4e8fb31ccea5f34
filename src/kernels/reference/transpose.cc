// Transpose: out dim i is input dim perm[i] (default: reversed).
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_transpose(KernelContext& c) {
  const Tensor& x = c.in(0);
  int64_t r = x.rank();
  std::vector<int64_t> perm = c.node.attr_ints("perm");
  if (perm.empty())
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  FP_CHECK(static_cast<int64_t>(perm.size()) == r, c.node.label(), ": perm has ", perm.size(), " entries for rank ", r);
  std::vector<bool> seen(r, false);
  for (auto& p : perm) {
    p = norm_axis(p, r, c.node, "perm entry");
    FP_CHECK(!seen[p], c.node.label(), ": perm is not a permutation");
    seen[p] = true;
  }
  Shape ys(r);
  for (int64_t i = 0; i < r; ++i) ys[i] = x.dim(perm[i]);
  Tensor& y = c.output(0, x.dtype(), ys);
  if (y.numel() == 0) return;
  std::vector<int64_t> xst = strides_of(x.shape()), st(r);
  for (int64_t i = 0; i < r; ++i) st[i] = xst[perm[i]];
  strided_copy(x.raw(), 0, st, y.raw(), ys, dtype_size(x.dtype()));
}

}  // namespace

void register_transpose(KernelRegistry& r) { r.add("Transpose", k_transpose); }

}  // namespace fixpoint::ref
