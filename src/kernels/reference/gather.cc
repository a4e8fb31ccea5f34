// Gather: out[i..., j..., k...] = x[i..., idx[j...], k...] along `axis`; negative indices wrap.
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_gather(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& ind = c.in(1);
  const Node& n = c.node;
  FP_CHECK(x.rank() >= 1, n.label(), ": data must be at least 1-D");
  FP_CHECK(ind.dtype() == DType::Int64 || ind.dtype() == DType::Int32, n.label(), ": indices must be int32/int64");
  int64_t axis = norm_axis(n.attr_int("axis", 0), x.rank(), n);
  Shape ys(x.shape().begin(), x.shape().begin() + axis);
  ys.insert(ys.end(), ind.shape().begin(), ind.shape().end());
  ys.insert(ys.end(), x.shape().begin() + axis + 1, x.shape().end());
  Tensor& y = c.output(0, x.dtype(), ys);
  int64_t outer = 1, inner = 1, len = x.dim(axis);
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  size_t es = dtype_size(x.dtype());
  const char* px = static_cast<const char*>(x.raw());
  char* py = static_cast<char*>(y.raw());
  int64_t ni = ind.numel();
  for (int64_t j = 0; j < ni; ++j) {
    int64_t k = ind.get_i64(j);
    FP_CHECK(k >= -len && k < len, n.label(), ": index ", k, " out of range for axis of size ", len);
    if (k < 0) k += len;
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(py + ((o * ni + j) * inner) * es, px + ((o * len + k) * inner) * es, inner * es);
  }
}

}  // namespace

void register_gather(KernelRegistry& r) { r.add("Gather", k_gather); }

}  // namespace fixpoint::ref
