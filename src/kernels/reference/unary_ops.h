// Per-element definitions of the unary ops that the fast float path also runs (Relu, Sigmoid,
// Tanh, Clip): one definition, used by the reference kernels and by src/kernels/float/unary_f32.cc,
// so both give the same bits by construction.
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

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

// Tanh of a float, written so that 8 or 16 lanes compute the same bits (the fast float path's
// AVX-512 row, f32_kernels_avx512.cc, follows it operation by operation; glibc's tanhf, a call
// per element, cost Zero-DCE 15% of its float time). In double, for |x| in [2^-13, 9.5):
//
//   y = 2|x|,  n = nearest(y / ln 2),  r = (y - n ln2_hi) - n ln2_lo        (fma each: |r| <= 0.35)
//   e = r (1 + r/2! + r^2/3! + ... + r^10/11!)    (Horner, fma each; e^r - 1 within 7e-15 of it)
//   t = 2^n e + (2^n - 1) = e^y - 1,   tanh x = sign(x) t / (t + 2)                            (U1)
//
// rounded once to float. |x| < 2^-13 gives x (|tanh x - x| < |x|^3 / 3, below half an ulp of
// x), |x| >= 9.5 gives +-1 (1 - tanh 9.5 < 2^-25), NaN itself. Within 1 ulp of tanh
// (`FastFloat.TanhWithinOneUlp`); ONNX Runtime's own is a rational approximation.
inline constexpr double kTanhExpm1[] = {1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720,
                                        1.0 / 120,      1.0 / 24,      1.0 / 6,      0.5,          1.0};
inline constexpr double kTanhInvLn2 = 1.4426950408889634, kTanhLn2Hi = 6.93147180369123816490e-01,
                        kTanhLn2Lo = 1.90821492927058770002e-10;
inline constexpr float kTanhTiny = 0x1p-13f, kTanhOne = 9.5f;

inline float tanh_f32(float x) {
  const float a = std::fabs(x);
  if (!(a < kTanhOne)) return std::isnan(x) ? x : std::copysign(1.0f, x);
  if (a < kTanhTiny) return x;
  const double y = 2.0 * a;
  const double n = std::nearbyint(y * kTanhInvLn2);
  double r = std::fma(-n, kTanhLn2Hi, y);
  r = std::fma(-n, kTanhLn2Lo, r);
  double p = kTanhExpm1[0];
  for (int i = 1; i < 11; ++i) p = std::fma(p, r, kTanhExpm1[i]);
  const double e = p * r, s = std::ldexp(1.0, static_cast<int>(n));
  const double t = std::fma(s, e, s - 1.0);
  return std::copysign(static_cast<float>(t / (t + 2.0)), x);
}

// Tanh: (U1) for float, the compute type's std::tanh otherwise.
struct TanhOp {
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>) return tanh_f32(x);
    else return std::tanh(x);
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
