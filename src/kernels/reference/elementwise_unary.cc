// Unary elementwise ops: one lambda per op, each the ONNX definition written out.
// Float16/bfloat16 compute in float; float32 in float; float64 in double.
#include "common.h"
#include "registry.h"
#include "unary_ops.h"

namespace fixpoint::ref {
namespace {

template <bool AllowInt, typename F>
void unary(KernelContext& ctx, F f) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  auto body = [&](auto tag) {
    using T = decltype(tag);
    using N = Num<T>;
    const T* a = x.data<T>();
    T* b = y.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) b[i] = N::store(static_cast<typename N::C>(f(N::load(a[i]))));
  };
  if constexpr (AllowInt) dispatch_numeric(x.dtype(), ctx.node, body);
  else dispatch_float(x.dtype(), ctx.node, body);
}

void k_abs(KernelContext& c) {
  unary<true>(c, [](auto x) -> decltype(x) {
    if constexpr (std::is_unsigned_v<decltype(x)>) return x;
    else return x < 0 ? -x : x;
  });
}
void k_neg(KernelContext& c) { unary<true>(c, [](auto x) { return -x; }); }
void k_ceil(KernelContext& c) { unary<false>(c, [](auto x) { return std::ceil(x); }); }
void k_floor(KernelContext& c) { unary<false>(c, [](auto x) { return std::floor(x); }); }
void k_exp(KernelContext& c) { unary<false>(c, [](auto x) { return std::exp(x); }); }
void k_log(KernelContext& c) { unary<false>(c, [](auto x) { return std::log(x); }); }
void k_sqrt(KernelContext& c) { unary<false>(c, [](auto x) { return std::sqrt(x); }); }
void k_erf(KernelContext& c) { unary<false>(c, [](auto x) { return std::erf(x); }); }
void k_tanh(KernelContext& c) { unary<false>(c, TanhOp{}); }
void k_reciprocal(KernelContext& c) { unary<false>(c, [](auto x) { return decltype(x)(1) / x; }); }
void k_relu(KernelContext& c) { unary<true>(c, ReluOp{}); }
void k_sigmoid(KernelContext& c) { unary<false>(c, SigmoidOp{}); }
void k_softplus(KernelContext& c) {
  // ln(exp(x) + 1) computed stably: max(x, 0) + log1p(exp(-|x|)).
  unary<false>(c, [](auto x) {
    using C = decltype(x);
    return std::max(x, C(0)) + std::log1p(std::exp(-std::abs(x)));
  });
}
void k_elu(KernelContext& c) {
  float alpha = c.node.attr_float("alpha", 1.0f);
  unary<false>(c, [alpha](auto x) {
    using C = decltype(x);
    return x < 0 ? C(alpha) * (std::exp(x) - C(1)) : x;
  });
}
void k_leaky_relu(KernelContext& c) {
  float alpha = c.node.attr_float("alpha", 0.01f);
  unary<false>(c, [alpha](auto x) { using C = decltype(x); return x < 0 ? C(alpha) * x : x; });
}
void k_hard_sigmoid(KernelContext& c) {
  float alpha = c.node.attr_float("alpha", 0.2f), beta = c.node.attr_float("beta", 0.5f);
  unary<false>(c, [alpha, beta](auto x) {
    using C = decltype(x);
    C v = C(alpha) * x + C(beta);
    return v != v ? v : std::max(C(0), std::min(C(1), v));  // NaN passes through
  });
}
void k_hard_swish(KernelContext& c) {
  // x * max(0, min(1, x/6 + 1/2)) (HardSigmoid with alpha 1/6, beta 0.5).
  unary<false>(c, [](auto x) {
    using C = decltype(x);
    return x * std::max(C(0), std::min(C(1), x * C(1.0 / 6.0) + C(0.5)));
  });
}

void k_gelu(KernelContext& c) {
  // opset 20: approximate "none": x/2 (1 + erf(x/sqrt 2)); "tanh": x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  std::string approx = c.node.attr_string("approximate", "none");
  FP_CHECK(approx == "none" || approx == "tanh", "node '", c.node.name, "' (Gelu): approximate='", approx,
           "' is not one of none, tanh");
  if (approx == "none") {
    unary<false>(c, [](auto x) {
      using C = decltype(x);
      return C(0.5) * x * (C(1) + std::erf(x * C(M_SQRT1_2)));
    });
  } else {
    unary<false>(c, [](auto x) {
      using C = decltype(x);
      return C(0.5) * x * (C(1) + std::tanh(C(0.7978845608028654) * (x + C(0.044715) * x * x * x)));
    });
  }
}

void k_sign(KernelContext& c) {
  unary<true>(c, [](auto x) -> decltype(x) {
    using C = decltype(x);
    if constexpr (std::is_unsigned_v<C>) {
      return x > C(0) ? C(1) : C(0);
    } else {
      if (x != x) return x;  // NaN
      return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));
    }
  });
}
void k_round(KernelContext& c) { unary<false>(c, [](auto x) { return std::nearbyint(x); }); }  // half to even
void k_softsign(KernelContext& c) { unary<false>(c, [](auto x) { return x / (decltype(x)(1) + std::abs(x)); }); }
void k_selu(KernelContext& c) {
  float alpha = c.node.attr_float("alpha", 1.67326319217681884765625f), gamma = c.node.attr_float("gamma", 1.05070102214813232421875f);
  unary<false>(c, [alpha, gamma](auto x) {
    using C = decltype(x);
    return x > C(0) ? C(gamma) * x : (x != x ? x : C(gamma) * (C(alpha) * std::exp(x) - C(alpha)));
  });
}
void k_celu(KernelContext& c) {
  float alpha = c.node.attr_float("alpha", 1.0f);
  unary<false>(c, [alpha](auto x) {
    using C = decltype(x);
    return x != x ? x : std::max(C(0), x) + std::min(C(0), C(alpha) * (std::exp(x / C(alpha)) - C(1)));
  });
}
void k_thresholded_relu(KernelContext& c) {
  float alpha = c.node.attr_float("alpha", 1.0f);
  unary<false>(c, [alpha](auto x) { using C = decltype(x); return x > C(alpha) ? x : C(0); });  // NaN -> 0, as ONNX Runtime
}

void k_not(KernelContext& c) {
  const Tensor& x = c.in(0);
  FP_CHECK(x.dtype() == DType::Bool, c.node.label(), ": input must be bool");
  Tensor& y = c.output(0, DType::Bool, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.data<uint8_t>()[i] = x.data<uint8_t>()[i] ? 0 : 1;
}

// IsNaN / IsInf: float in, bool out.
template <bool Nan>
void is_nonfinite(KernelContext& c) {
  const Tensor& x = c.in(0);
  Tensor& y = c.output(0, DType::Bool, x.shape());
  bool pos = c.node.attr_int("detect_positive", 1) != 0, neg = c.node.attr_int("detect_negative", 1) != 0;
  dispatch_float(x.dtype(), c.node, [&](auto tag) {
    using T = decltype(tag);
    const T* a = x.data<T>();
    uint8_t* b = y.data<uint8_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      double v = static_cast<double>(Num<T>::load(a[i]));
      b[i] = Nan ? std::isnan(v) : (std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg)));
    }
  });
}

}  // namespace

void register_elementwise_unary(KernelRegistry& r) {
  r.add("Abs", k_abs);
  r.add("Neg", k_neg);
  r.add("Ceil", k_ceil);
  r.add("Floor", k_floor);
  r.add("Exp", k_exp);
  r.add("Log", k_log);
  r.add("Sqrt", k_sqrt);
  r.add("Erf", k_erf);
  r.add("Tanh", k_tanh);
  r.add("Reciprocal", k_reciprocal);
  r.add("Relu", k_relu);
  r.add("Sigmoid", k_sigmoid);
  r.add("Softplus", k_softplus);
  r.add("Elu", k_elu);
  r.add("LeakyRelu", k_leaky_relu);
  r.add("HardSigmoid", k_hard_sigmoid);
  r.add("HardSwish", k_hard_swish);
  r.add("Gelu", k_gelu);
  r.add("Sign", k_sign);
  r.add("Round", k_round);
  r.add("Softsign", k_softsign);
  r.add("Selu", k_selu);
  r.add("Celu", k_celu);
  r.add("ThresholdedRelu", k_thresholded_relu);
  r.add("IsNaN", is_nonfinite<true>);
  r.add("Not", k_not);
  r.add("IsInf", is_nonfinite<false>);
}

}  // namespace fixpoint::ref
