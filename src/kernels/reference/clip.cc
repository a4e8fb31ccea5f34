// Clip: y = min(max(x, lo), hi). Opset < 11 takes min/max attributes, later opsets inputs.
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_clip(KernelContext& c) {
  const Tensor& x = c.in(0);
  Tensor& y = c.output(0, x.dtype(), x.shape());
  dispatch_numeric(x.dtype(), c.node, [&](auto tag) {
    using T = decltype(tag);
    using N = Num<T>;
    using C = typename N::C;
    C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
    if constexpr (std::is_floating_point_v<C>) {
      lo = -std::numeric_limits<C>::infinity();
      hi = std::numeric_limits<C>::infinity();
    }
    if (c.node.opset < 11) {
      if (c.node.has_attr("min")) lo = static_cast<C>(c.node.attr_float("min", 0));
      if (c.node.has_attr("max")) hi = static_cast<C>(c.node.attr_float("max", 0));
    } else {
      for (size_t k : {1, 2}) {
        const Tensor* b = c.input(k);
        if (!b) continue;
        FP_CHECK(b->numel() == 1 && b->dtype() == x.dtype(), c.node.label(), ": ", k == 1 ? "min" : "max",
                 " must be a scalar of the input's dtype");
        (k == 1 ? lo : hi) = N::load(b->data<T>()[0]);
      }
    }
    const T* a = x.data<T>();
    T* b = y.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      C v = N::load(a[i]);
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
      b[i] = N::store(v);
    }
  });
}

}  // namespace

void register_clip(KernelRegistry& r) { r.add("Clip", k_clip); }

}  // namespace fixpoint::ref
