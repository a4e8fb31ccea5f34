// fixpoint: the typed contract between the compiler and the integer kernels. Each integer op
// kind has one parameter struct: its prepare step (src/quantize) fills it at compile time, the
// artifact stores it through the struct's field list (one schema, validated on load), and its
// integer reference kernel and every fast kernel read it. No string-keyed maps in between.
//
// Every struct lists its fields once, in `fields(v)`: v(name, member) for each. The artifact
// writer/reader and the validator walk that list (src/artifact/op_schema.cc).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <variant>

#include "fixpoint/fixedpoint.h"
#include "fixpoint/tensor.h"

namespace fixpoint::params {

// An op the accelerator does not run: the float reference kernel of its node, between dequantize
// and quantize (CPU fallback).
struct Float {
  static constexpr const char* kKind = "float";
  template <class V> void fields(V&) {}
};

// Data movement (Reshape, Transpose, Slice, MaxPool, Resize nearest, Pad, ...): the node's own
// kernel moves the integer codes; the output has the input's encoding (docs/arithmetic.md §5.7).
struct Move {
  static constexpr const char* kKind = "move";
  template <class V> void fields(V&) {}
};

// [lo, hi]: output codes after a fused activation (§5.1), within the output type's range.
struct Clamp {
  int64_t lo = 0, hi = 0;
};

// Conv, ConvTranspose, Gemm/MatMul with constant weights (9)-(15): weight codes (int8 for 8-bit
// weights, int16 for 16-bit), per output channel the bias (11) and RQ multiplier m 2^-n (12), the weight
// scale (for bias correction and reports), and whether the layer accumulates in int64 (§4).
struct Weighted : Clamp {
  Tensor weight;        // int8 or int16 (weight_bits): Conv [M, C/g, k...], ConvTranspose and MatMul [N, K]
  Tensor bias;          // int64 [N]
  Tensor mult, shift;   // int64 [N]
  Tensor weight_scale;  // float64 [N]
  bool wide = false;
  int64_t weight_bits = 8;
  template <class V> void weighted_fields(V& v) {
    v("weight", weight);
    v("bias", bias);
    v("mult", mult);
    v("shift", shift);
    v("weight_scale", weight_scale);
    v("lo", lo);
    v("hi", hi);
    v("wide", wide);
    v("weight_bits", weight_bits);
  }
};
// §4: whether channel c's int32 accumulator holds every sum: K products of input codes (of type
// `in_type`, offset by `in_zero_point`) and weights in the weight type's range, plus the bias.
inline bool int32_holds(const Weighted& w, int64_t c, DType in_type, int64_t in_zero_point) {
  fx::Range xr = fx::range_of(in_type);
  int64_t xmax = std::max(std::abs(xr.lo - in_zero_point), std::abs(xr.hi - in_zero_point));
  int64_t N = w.weight.dim(0), K = w.weight.numel() / (N > 0 ? N : 1);
  int64_t wmax = w.weight_bits == 8 ? 128 : 32768;
  int64_t b = w.bias.data<int64_t>()[c];
  return static_cast<__int128>(K) * xmax * wmax + (b < 0 ? -static_cast<__int128>(b) : b) < (int64_t{1} << 31);
}
struct Conv : Weighted {
  static constexpr const char* kKind = "conv";
  template <class V> void fields(V& v) { weighted_fields(v); }
};
struct MatMul : Weighted {
  static constexpr const char* kKind = "matmul";
  template <class V> void fields(V& v) { weighted_fields(v); }
};
struct ConvTranspose : Weighted {
  static constexpr const char* kKind = "conv_transpose";
  int64_t mg = 1;       // output channels per group
  Tensor kernel_shape;  // int64 [spatial rank]
  template <class V> void fields(V& v) {
    weighted_fields(v);
    v("mg", mg);
    v("kernel_shape", kernel_shape);
  }
};

// Add/Sub (16)-(17): q_y = RQ'(A (q_a - z_a) + sign B (q_b - z_b)) with 2^-L.
struct AddSub : Clamp {
  static constexpr const char* kKind = "addsub";
  int64_t L = 20, A = 0, B = 0, sign = 1;
  bool wide = false;
  template <class V> void fields(V& v) {
    v("L", L);
    v("A", A);
    v("B", B);
    v("sign", sign);
    v("lo", lo);
    v("hi", hi);
    v("wide", wide);
  }
};

// Mul (18), Div (32), MatMul of two activations (21): one multiplier m 2^-n.
struct Scaled : Clamp {
  int64_t m = 1, n = 0;
  bool wide = false;
  template <class V> void scaled_fields(V& v) {
    v("m", m);
    v("n", n);
    v("lo", lo);
    v("hi", hi);
    v("wide", wide);
  }
};
struct Mul : Scaled {
  static constexpr const char* kKind = "mul";
  template <class V> void fields(V& v) { scaled_fields(v); }
};
struct Div : Scaled {
  static constexpr const char* kKind = "div";
  template <class V> void fields(V& v) { scaled_fields(v); }
};
struct MatMul2 : Scaled {
  static constexpr const char* kKind = "matmul2";
  template <class V> void fields(V& v) { scaled_fields(v); }
};

// Concat (19): input i requantized with mult[i] 2^-shift[i].
struct Concat {
  static constexpr const char* kKind = "concat";
  Tensor mult, shift;  // int64 [inputs]
  template <class V> void fields(V& v) {
    v("mult", mult);
    v("shift", shift);
  }
};

// PRelu (33): m 2^-n where x >= z_x, else per slope element |M_k| with its sign.
struct PRelu : Clamp {
  static constexpr const char* kKind = "prelu";
  int64_t m = 1, n = 0;
  bool wide = false;
  Tensor neg_mult, neg_shift, neg_sign;  // int64, the slope's shape
  template <class V> void fields(V& v) {
    v("m", m);
    v("n", n);
    v("wide", wide);
    v("neg_mult", neg_mult);
    v("neg_shift", neg_shift);
    v("neg_sign", neg_sign);
    v("lo", lo);
    v("hi", hi);
  }
};

// ReduceSum / ReduceMean (31).
struct Reduce : Clamp {
  static constexpr const char* kKind = "reduce";
  bool mean = false;
  int64_t m = 0, n = 0;  // M = s_x / s_y (12); a mean divides by the count exactly (31)
  template <class V> void fields(V& v) {
    v("mean", mean);
    v("m", m);
    v("n", n);
    v("lo", lo);
    v("hi", hi);
  }
};

// AveragePool / GlobalAveragePool (§5.6, (19)): M = s_x / s_y; the window's count divides exactly.
struct AvgPool {
  static constexpr const char* kKind = "avgpool";
  int64_t m = 0, n = 0;
  template <class V> void fields(V& v) {
    v("m", m);
    v("n", n);
  }
};

// GlobalMaxPool: the largest code of each plane (the input's encoding).
struct GlobalMaxPool {
  static constexpr const char* kKind = "globalmaxpool";
  template <class V> void fields(V&) {}
};

// Softmax (23)-(25): E[d] = R(2^30 exp(-s_x d)) over the span of input codes; Q = 1 / s_y.
struct Softmax {
  static constexpr const char* kKind = "softmax";
  Tensor exp_table;  // int32 [span of the input code type]
  int64_t Q = 255;
  template <class V> void fields(V& v) {
    v("exp_table", exp_table);
    v("Q", Q);
  }
};

// Normalization of rows (26)-(30): per affine index j, gamma_j / s_y = sign_j mult_j 2^-shift_j
// and beta_j in units of 2^-16 s_y; EPS = R(2^16 eps / s_x^2).
struct Normalize {
  Tensor mult, shift, sign, beta;  // int64 [affine size]
  int64_t eps_fx = 0;
  template <class V> void normalize_fields(V& v) {
    v("mult", mult);
    v("shift", shift);
    v("sign", sign);
    v("beta", beta);
    v("eps_fx", eps_fx);
  }
};
// LayerNormalization over the last axis: a row is a last-axis vector, j its element index.
struct LayerNorm : Normalize {
  static constexpr const char* kKind = "layernorm";
  template <class V> void fields(V& v) { normalize_fields(v); }
};
// InstanceNormalization (§5.19): a row is one (n, c) plane, j its channel c.
struct InstanceNorm : Normalize {
  static constexpr const char* kKind = "instancenorm";
  template <class V> void fields(V& v) { normalize_fields(v); }
};

// Unary function by table (20): table[q - in_lo] is the output code of input code q.
// (20a): `curve` (float32 [7], fx::TableCurve, or empty) gives the same codes as the table for
// every input code outside the curve's margin, checked when compiled and when loaded.
struct Table {
  static constexpr const char* kKind = "lut";
  Tensor table;  // the output's code type, one entry per input code
  int64_t in_lo = 0;
  Tensor curve = Tensor(DType::Float32, {0});
  template <class V> void fields(V& v) {
    v("table", table);
    v("in_lo", in_lo);
    v("curve", curve);
  }
};

// Resize / Upsample linear (34): M = s_x / s_y as m 2^-n (the kernel adds F bits of shift per
// interpolating axis, which the geometry decides).
struct ResizeLinear : Clamp {
  static constexpr const char* kKind = "resize_linear";
  int64_t m = 1, n = 0;
  template <class V> void fields(V& v) {
    v("m", m);
    v("n", n);
    v("lo", lo);
    v("hi", hi);
  }
};

}  // namespace fixpoint::params

namespace fixpoint {

// One alternative per program op kind; the index is stable within a format version.
using OpParams = std::variant<params::Float, params::Move, params::Conv, params::ConvTranspose, params::MatMul,
                              params::AddSub, params::Mul, params::Div, params::MatMul2, params::Concat,
                              params::PRelu, params::Reduce, params::AvgPool, params::GlobalMaxPool,
                              params::Softmax, params::LayerNorm, params::InstanceNorm, params::Table,
                              params::ResizeLinear>;

// The Weighted params of a Conv, ConvTranspose or MatMul op; nullptr for any other kind.
inline const params::Weighted* weighted_params(const OpParams& p) {
  if (const auto* c = std::get_if<params::Conv>(&p)) return c;
  if (const auto* t = std::get_if<params::ConvTranspose>(&p)) return t;
  return std::get_if<params::MatMul>(&p);
}
inline params::Weighted* weighted_params(OpParams& p) {
  return const_cast<params::Weighted*>(weighted_params(static_cast<const OpParams&>(p)));
}

// The kind name of the alternative p holds ("conv", "lut", ...), as reports and artifacts spell it.
inline const char* kind_name(const OpParams& p) {
  return std::visit([](const auto& a) { return std::decay_t<decltype(a)>::kKind; }, p);
}

}  // namespace fixpoint
