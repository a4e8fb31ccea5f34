// Per-element definitions of the unary ops that the fast float path also runs (Relu, Sigmoid,
// Tanh, Clip): one definition, used by the reference kernels and by src/kernels/float/unary_f32.cc,
// so both give the same bits by construction.
#pragma once
#include <cmath>
#include <limits>

#include "common.h"

namespace fixpoint::ref {

// Relu written so that NaN passes through (as in ONNX Runtime): only x < 0 is replaced.
struct ReluOp {
  template <typename C>
  C operator()(C x) const {
    return x < C(0) ? C(0) : x;
  }
};

// Sigmoid written so that neither branch overflows exp().
struct SigmoidOp {
  template <typename C>
  C operator()(C x) const {
    if (x >= 0) return C(1) / (C(1) + std::exp(-x));
    C e = std::exp(x);
    return e / (C(1) + e);
  }
};

// Tanh: the compute type's std::tanh.
struct TanhOp {
  template <typename C>
  C operator()(C x) const {
    return std::tanh(x);
  }
};

// Clip's bounds in the compute type C: opset < 11 from the min/max attributes, later opsets from
// the optional scalar inputs 1 and 2; unbounded (±Inf for floats) where absent.
template <typename T>
void clip_bounds(const KernelContext& c, typename Num<T>::C& lo, typename Num<T>::C& hi) {
  using N = Num<T>;
  using C = typename N::C;
  lo = std::numeric_limits<C>::lowest();
  hi = std::numeric_limits<C>::max();
  if constexpr (std::is_floating_point_v<C>) {
    lo = -std::numeric_limits<C>::infinity();
    hi = std::numeric_limits<C>::infinity();
  }
  if (c.node.opset < 11) {
    if (c.node.has_attr("min")) lo = static_cast<C>(c.node.attr_float("min", 0));
    if (c.node.has_attr("max")) hi = static_cast<C>(c.node.attr_float("max", 0));
    return;
  }
  for (size_t k : {1, 2}) {
    const Tensor* b = c.input(k);
    if (!b) continue;
    FP_CHECK(b->numel() == 1 && b->dtype() == c.in(0).dtype(), c.node.label(), ": ", k == 1 ? "min" : "max",
             " must be a scalar of the input's dtype");
    (k == 1 ? lo : hi) = N::load(b->data<T>()[0]);
  }
}

// y = min(max(x, lo), hi) as compares (a NaN passes through).
template <typename C>
C clip_value(C v, C lo, C hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

}  // namespace fixpoint::ref
