// Integer Conv / MatMul layers with random prepared constants and random 8-bit input codes, for
// the bit-exactness tests of the optimized kernels and for the kernel benchmarks (bench/).
#pragma once
#include <algorithm>
#include <random>

#include "fixpoint/error.h"
#include "kernels/reference/integer/integer_kernels.h"
#include "test_util.h"

namespace fixpoint::test {

struct Case {
  QOp op;
  Tensor x;
  QParams qx, qy;
};

inline Tensor random_codes(DType t, const Shape& s, std::mt19937& rng) {
  Tensor r(t, s);
  fx::Range range = fx::range_of(t);
  std::uniform_int_distribution<int64_t> d(range.lo, range.hi);
  std::vector<int64_t> v(static_cast<size_t>(r.numel()));
  for (auto& e : v) e = d(rng);
  qref::store_codes(r, v);
  return r;
}

// Per-channel prepared constants. Half the layers are "wide" through a bias code beyond int32
// (a channel with near-zero weights): the GEMM still sums the products in int32 (§4 bound on K).
// `x16`: 16-bit activation codes, summed through byte planes (each operand below 2^8).
inline void prepare_channels(params::Weighted& op, int64_t M, int64_t K, std::mt19937& rng, int64_t wmax,
                             bool x16 = false) {
  bool wide = rng() % 2 || x16;  // 16-bit layers accumulate in int64 (§4)
  // Half the int32 layers get (12)'s float-mode multipliers, m in [2^30, 2^31) and n from 31
  // (what the compiler makes for M < 1/2, the optimized kernels' vector epilogue).
  bool q31 = !wide && rng() % 2;
  int64_t bmax = wide ? int64_t{1} << 40 : int64_t{1} << 20;
  Tensor bias(DType::Int64, {M}), mult(DType::Int64, {M}), shift(DType::Int64, {M});
  std::uniform_int_distribution<int64_t> b(-bmax, bmax), m(1 << 14, (1 << 15) - 1), n(14, 24);
  std::uniform_int_distribution<int64_t> m31(int64_t{1} << 30, (int64_t{1} << 31) - 1), n31(31, 44);
  std::uniform_int_distribution<int64_t> tie(1, 5);
  // A wide layer's channels are mixed, as in real layers made wide by one channel: some keep a
  // bias beyond int32, some a small one, and some one near int32's edge, where bias +
  // sum leaves int32 in some output rows only (the optimized epilogue checks each row: (13) on
  // int32 lanes where bias + sum fits and n <= 62, 128-bit elsewhere); some shifts exceed 62.
  int64_t edge = std::min<int64_t>((int64_t{1} << 31) - 1, K * 255 * wmax);
  std::uniform_int_distribution<int64_t> b_small(-(1 << 20), 1 << 20), b_edge((int64_t{1} << 31) - edge, (int64_t{1} << 31) - 1);
  // And some channels are dead, as the compiler writes a channel of zero weights and scale: a
  // bias code of +-2^62 (or a zero multiplier), one output code whatever the sums.
  for (int64_t c = 0; c < M; ++c) {
    int kind = wide && !x16 ? static_cast<int>(rng() % 4) : 0;
    bias.data<int64_t>()[c] = kind == 0   ? b(rng)
                              : kind == 1 ? b_small(rng)
                              : kind == 2 ? (rng() % 2 ? 1 : -1) * b_edge(rng)
                                          : (rng() % 2 ? 1 : -1) * (int64_t{1} << 62);
    mult.data<int64_t>()[c] = q31 ? m31(rng) : m(rng);
    shift.data<int64_t>()[c] = q31 ? n31(rng) : n(rng) + (wide ? 20 : 0);
    if (kind == 1 && rng() % 4 == 0) shift.data<int64_t>()[c] += 25;  // n in [59, 69]: past int64's 62
    if (kind == 3 && rng() % 3 == 0) mult.data<int64_t>()[c] = 0;
    if (rng() % 4 == 0) {  // M = 2^-k: half the sums end on a rounding tie of RSH (4) when k = 1
      mult.data<int64_t>()[c] = q31 ? int64_t{1} << 30 : int64_t{1} << 14;
      shift.data<int64_t>()[c] = (q31 ? 30 : wide ? 34 : 14) + tie(rng);
    }
  }
  op.bias = bias;
  op.mult = mult;
  op.shift = shift;
  op.wide = wide;
  op.weight_bits = wmax <= 127 ? 8 : 16;
  FP_CHECK(x16 ? K * 256 * 256 < (int64_t{1} << 31) : K * 255 * wmax < (int64_t{1} << 31),
           "test layer exceeds the int32 bound of §4");
}

inline Tensor random_weights(const Shape& s, int64_t wmax, std::mt19937& rng) {
  Tensor w(wmax <= 127 ? DType::Int8 : DType::Int16, s);  // as the compiler stores them
  std::uniform_int_distribution<int64_t> d(-wmax, wmax), zero(0, 9);
  // Some exact zeros: the reference skips them, the GEMM multiplies them.
  for (int64_t i = 0; i < w.numel(); ++i) w.set_f64(i, static_cast<double>(zero(rng) ? d(rng) : 0));
  return w;
}

// A random code type: 8-bit, or, when `wide`, 16-bit a third of the time (fused intermediates).
inline DType random_code_type(std::mt19937& rng, bool wide) {
  bool w16 = wide && rng() % 3 == 0;
  bool u = rng() % 2;
  return w16 ? (u ? DType::UInt16 : DType::Int16) : (u ? DType::UInt8 : DType::Int8);
}

inline void set_output(Case& c, std::mt19937& rng, bool wide = false) {
  c.qy.type = random_code_type(rng, wide);
  fx::Range r = fx::range_of(c.qy.type);
  c.qy.zero_point = c.qy.type == DType::UInt8 || c.qy.type == DType::UInt16 ? static_cast<int64_t>(rng() % 40) : 0;
  std::visit([&](auto& p) {
    if constexpr (std::is_base_of_v<params::Clamp, std::decay_t<decltype(p)>>) {
      p.lo = r.lo;
      p.hi = r.hi;
    }
  }, c.op.params);
}

inline void set_input(Case& c, const Shape& s, std::mt19937& rng, bool wide = false) {
  c.qx.type = random_code_type(rng, wide);
  c.qx.zero_point = c.qx.type == DType::UInt8 || c.qx.type == DType::UInt16 ? static_cast<int64_t>(rng() % 128) : static_cast<int64_t>(rng() % 5) - 2;
  c.x = random_codes(c.qx.type, s, rng);
}

// The two inputs of a binary op (Add, Mul, MatMul of activations): codes of shapes sa and sb,
// each of any 8/16-bit type with its zero point (set_input's choices, a then b).
struct Operands {
  Tensor a, b;
  QParams qa, qb;
};
inline Operands random_operands(const Shape& sa, const Shape& sb, std::mt19937& rng) {
  Case tmp;
  Operands o;
  set_input(tmp, sa, rng, true);
  o.a = tmp.x;
  o.qa = tmp.qx;
  set_input(tmp, sb, rng, true);
  o.b = tmp.x;
  o.qb = tmp.qx;
  return o;
}

// int16 or uint16 input codes with a zero point (a 16-bit layer's input).
inline void set_input16(Case& c, const Shape& s, std::mt19937& rng) {
  c.qx.type = rng() % 2 ? DType::UInt16 : DType::Int16;
  c.qx.zero_point = c.qx.type == DType::UInt16 ? static_cast<int64_t>(rng() % 30000) : 0;
  c.x = random_codes(c.qx.type, s, rng);
}

struct ConvSpec {
  Shape x;  // N, C, spatial...
  int64_t M = 1, group = 1;
  std::vector<int64_t> kernel, strides, dilations, pads;
};

// A Conv layer of `spec` with weights in [-wmax, wmax] and random codes, zero points, biases,
// multipliers (half of them "wide", see prepare_channels).
// With `x16`: int16/uint16 input codes and 16-bit outputs a third of the time (a 16-bit layer).
inline Case make_conv_case(const ConvSpec& spec, const std::string& name, std::mt19937& rng, int64_t wmax = 127,
                           bool x16 = false) {
  Case c;
  int64_t cg = spec.x[1] / spec.group;
  Shape ws = {spec.M, cg};
  ws.insert(ws.end(), spec.kernel.begin(), spec.kernel.end());
  c.op.params = params::Conv{};
  auto& p = c.op.as<params::Conv>();
  c.op.node = make_node("Conv", {"x"}, {"y"}, name,
                        {{"group", int_attr(spec.group)}, {"strides", ints_attr(spec.strides)},
                         {"dilations", ints_attr(spec.dilations)}, {"pads", ints_attr(spec.pads)}});
  p.weight = random_weights(ws, wmax, rng);
  int64_t K = cg;
  for (int64_t k : spec.kernel) K *= k;
  prepare_channels(p, spec.M, K, rng, wmax, x16);
  set_input(c, spec.x, rng);
  if (x16) set_input16(c, spec.x, rng);
  set_output(c, rng, x16);
  return c;
}

// A ConvTranspose layer of `spec` (M output channels): prepared weights W[m][(ci - g cg) ks + k].
inline Case make_conv_transpose_case(const ConvSpec& spec, const std::string& name, std::mt19937& rng,
                                     std::vector<int64_t> output_padding = {}, int64_t wmax = 127, bool x16 = false) {
  Case c;
  int64_t cg = spec.x[1] / spec.group, mg = spec.M / spec.group, ks = 1;
  for (int64_t k : spec.kernel) ks *= k;
  c.op.params = params::ConvTranspose{};
  auto& p = c.op.as<params::ConvTranspose>();
  std::map<std::string, Attribute> attrs = {{"group", int_attr(spec.group)}, {"strides", ints_attr(spec.strides)},
                                            {"dilations", ints_attr(spec.dilations)}, {"pads", ints_attr(spec.pads)}};
  if (!output_padding.empty()) attrs["output_padding"] = ints_attr(output_padding);
  c.op.node = make_node("ConvTranspose", {"x"}, {"y"}, name, attrs);
  p.weight = random_weights({spec.M, cg * ks}, wmax, rng);
  p.kernel_shape = Tensor::from_i64(spec.kernel, {static_cast<int64_t>(spec.kernel.size())});
  p.mg = mg;
  prepare_channels(p, spec.M, cg * ks, rng, wmax, x16);
  set_input(c, spec.x, rng);
  if (x16) set_input16(c, spec.x, rng);
  set_output(c, rng, x16);
  return c;
}

// A Gemm/MatMul layer: x of shape xs (last dim K) times prepared W[N][K].
inline Case make_matmul_case(const Shape& xs, int64_t N, const std::string& name, std::mt19937& rng,
                             int64_t wmax = 127, bool x16 = false) {
  Case c;
  int64_t K = xs.back();
  c.op.params = params::MatMul{};
  auto& p = c.op.as<params::MatMul>();
  c.op.node = make_node("MatMul", {"x"}, {"y"}, name);
  p.weight = random_weights({N, K}, wmax, rng);
  prepare_channels(p, N, K, rng, wmax, x16);
  set_input(c, xs, rng);
  if (x16) set_input16(c, xs, rng);
  set_output(c, rng, x16);
  return c;
}

}  // namespace fixpoint::test
