// Clip: y = min(max(x, lo), hi). Opset < 11 takes min/max attributes, later opsets inputs.
#include "common.h"
#include "registry.h"
#include "unary_ops.h"

namespace fixpoint::ref {
namespace {

void k_clip(KernelContext& c) {
  const Tensor& x = c.in(0);
  Tensor& y = c.output(0, x.dtype(), x.shape());
  dispatch_numeric(x.dtype(), c.node, [&](auto tag) {
    using T = decltype(tag);
    using N = Num<T>;
    using C = typename N::C;
    C lo, hi;
    clip_bounds<T>(c, lo, hi);
    const T* a = x.data<T>();
    T* b = y.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      C v = clip_value(N::load(a[i]), lo, hi);
      b[i] = N::store(v);
    }
  });
}

}  // namespace

void register_clip(KernelRegistry& r) { r.add("Clip", k_clip); }

}  // namespace fixpoint::ref
