// CumSum(x, axis) with the exclusive and reverse attributes: a running sum along one axis, in
// the input's own type (float sums in float, in element order, as ONNX Runtime does).
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_cumsum(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& at = c.in(1);
  FP_CHECK(at.numel() == 1 && (at.dtype() == DType::Int64 || at.dtype() == DType::Int32), c.node.label(),
           ": axis must be one int32/int64 value");
  int64_t axis = norm_axis(at.get_i64(0), x.rank(), c.node, "axis");
  bool exclusive = c.node.attr_int("exclusive", 0) != 0, reverse = c.node.attr_int("reverse", 0) != 0;
  Tensor& y = c.output(0, x.dtype(), x.shape());
  int64_t len = x.dim(axis), inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  int64_t outer = len ? x.numel() / (len * inner) : 0;
  dispatch_numeric(x.dtype(), c.node, [&](auto tag) {
    using T = decltype(tag);
    using N = Num<T>;
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        typename N::C acc = 0;
        for (int64_t k = 0; k < len; ++k) {
          int64_t j = reverse ? len - 1 - k : k;
          int64_t at_j = (o * len + j) * inner + i;
          typename N::C v = N::load(px[at_j]);
          if (!exclusive) acc += v;
          py[at_j] = N::store(acc);
          if (exclusive) acc += v;
        }
      }
  });
}

}  // namespace

void register_cumsum(KernelRegistry& r) { r.add("CumSum", k_cumsum); }

}  // namespace fixpoint::ref
