// Randomized per-op tests of the integer kernels against the error bounds stated in
// docs/arithmetic.md §5: each op is compiled alone (8 and 16 bits), run on seeded random
// inputs, and compared with the float op evaluated on the *dequantized* inputs (and weights).
#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "fixpoint/fixedpoint.h"
#include "fixpoint/program_runner.h"
#include "kernels/reference/integer/integer_kernels.h"

namespace fixpoint {
namespace {

using test::make_node;

struct OpCase {
  std::string name;
  Graph graph;
  std::map<std::string, Shape> input_shapes;
  std::map<std::string, std::pair<float, float>> input_ranges;
};

// The mode a test runs in: width, and (8-bit) asymmetric activations (8a), where every signed
// input range is made lopsided so that inputs and outputs get uint8 codes with zero points.
struct Mode {
  int bits;
  bool asymmetric;
};
void PrintTo(const Mode& m, std::ostream* os) { *os << m.bits << "-bit" << (m.asymmetric ? " asymmetric" : ""); }
Mode g_mode{8, false};

Program compile_graph(const Graph& g, int bits, const std::vector<std::map<std::string, Tensor>>& calib) {
  CompileOptions o;
  o.bits = bits;
  o.asymmetric = g_mode.asymmetric;
  return test::compile_graph(g, o, calib).program;
}

Tensor dequantized_input(const Tensor& x, const QParams& q) {
  Tensor d(DType::Float32, x.shape());
  fx::Range r = fx::range_of(q.type);
  for (int64_t i = 0; i < x.numel(); ++i)
    d.data<float>()[i] = fx::dequantize(fx::quantize(x.get_f64(i), q.scale, q.zero_point, r), q.scale, q.zero_point);
  return d;
}

// Float reference of the program's single compiled op, with its weights dequantized.
Graph reference_graph(const Graph& g, const Program& p) {
  Graph ref = g;
  const QOp& op = p.ops.at(0);
  if (op.is<params::Conv>() || op.is<params::ConvTranspose>() || op.is<params::MatMul>()) {
    Node& n = ref.nodes[0];
    const params::Weighted& pw = qref::weighted(op);
    const Tensor& qw = pw.weight;
    const Tensor& ws = pw.weight_scale;
    const Tensor& qb = pw.bias;
    double sx = p.tensors.at(n.inputs[0]).scale;
    Tensor& w = ref.initializers.at(n.inputs[1]);
    int64_t N = qw.dim(0), K = qw.numel() / N;
    bool gemm_like = n.op_type != "Conv" && n.op_type != "ConvTranspose";
    for (int64_t c = 0; c < N; ++c)
      for (int64_t k = 0; k < K; ++k) {
        float v = static_cast<float>(qw.data<int16_t>()[c * K + k] * ws.data<double>()[c]);
        int64_t at = gemm_like ? k * N + c : c * K + k;  // MatMul B is K x N
        if (n.op_type == "ConvTranspose") {  // prepared rows W'[m][ci * ks + kk] of W[C, mg, k...]
          int64_t mg = w.dim(1), ks = w.numel() / (w.dim(0) * mg), cg = K / ks;
          at = (((c / mg) * cg + k / ks) * mg + c % mg) * ks + k % ks;
        }
        w.data<float>()[at] = v;
      }
    if (n.inputs.size() > 2)
      for (int64_t c = 0; c < N; ++c)
        ref.initializers.at(n.inputs[2]).data<float>()[c] =
            static_cast<float>(static_cast<double>(qb.data<int64_t>()[c]) * sx * ws.data<double>()[c]);
  }
  return ref;
}

void check_case(const OpCase& oc, int bits, uint32_t seed, double extra_lsb = 0.0) {
  SCOPED_TRACE(cat(oc.name, " ", bits, "-bit, seed ", seed));
  std::mt19937 rng(seed);
  auto make_inputs = [&]() {
    std::map<std::string, Tensor> m;
    for (const auto& [name, shape] : oc.input_shapes) {
      auto [lo, hi] = oc.input_ranges.at(name);
      if (g_mode.asymmetric && lo < 0 && hi > 0) lo *= 0.08f;  // e.g. [-1, 3] -> [-0.08, 3]
      m[name] = test::random_tensor(shape, rng(), lo, hi);
    }
    return m;
  };
  std::vector<std::map<std::string, Tensor>> calib = {make_inputs(), make_inputs(), make_inputs()};
  Program p = compile_graph(oc.graph, bits, calib);
  ASSERT_EQ(p.ops.size(), 1u);
  ASSERT_NE(p.ops[0].kind(), "float") << p.ops[0].reason;
  if (g_mode.asymmetric) {  // the mode is only worth its name if some input really has a zero point
    bool lopsided = false, zp = false;
    for (const auto& [name, range] : oc.input_ranges) {
      lopsided = lopsided || (range.first < 0 && range.second > 0);
      zp = zp || p.tensors.at(name).zero_point != 0;
    }
    EXPECT_EQ(zp, lopsided) << "asymmetric mode: no input got a zero point";
  }
  auto inputs = make_inputs();
  // Keep test inputs inside the calibrated ranges: no saturation in the comparison.
  std::map<std::string, Tensor> deq;
  for (const auto& [name, t] : inputs) deq[name] = dequantized_input(t, p.tensors.at(name));
  ProgramRunner runner(p);
  ProgramOutputs out = runner.run(inputs);
  Executor ref(reference_graph(oc.graph, p));
  auto want = ref.run(deq);
  const std::string& yname = oc.graph.outputs[0].name;
  const Tensor& got = out.values.at(yname);
  const Tensor& w = want.at(yname);
  QParams qy = p.tensors.at(yname);
  fx::Range r = fx::range_of(qy.type);
  double bound = qy.scale * (0.5 + extra_lsb) + 1e-6 * qy.scale * std::max(std::abs(r.lo), r.hi);
  ASSERT_EQ(got.shape(), w.shape());
  int64_t checked = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double wv = w.get_f64(i);
    double code = wv / qy.scale + static_cast<double>(qy.zero_point);
    if (code > r.hi - 0.5 || code < r.lo + 0.5) continue;  // saturated
    ASSERT_LE(std::abs(got.get_f64(i) - wv), bound) << "element " << i << " want " << wv << " scale " << qy.scale;
    ++checked;
  }
  EXPECT_GT(checked, got.numel() / 2);
}

OpCase unary_case(const std::string& op, float lo, float hi, std::map<std::string, Attribute> attrs = {}) {
  OpCase c{op, {}, {{"x", {2, 3, 5, 7}}}, {{"x", {lo, hi}}}};
  c.graph.opsets[""] = 13;
  c.graph.inputs.push_back(test::input_info("x", {-1, 3, 5, 7}));
  c.graph.nodes.push_back(make_node(op, {"x"}, {"y"}, "op", attrs));
  c.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return c;
}

OpCase binary_case(const std::string& op, Shape a, Shape b, float ahi, float bhi) {
  OpCase c{op, {}, {{"a", a}, {"b", b}}, {{"a", {-ahi, ahi}}, {"b", {-bhi, bhi}}}};
  c.graph.opsets[""] = 13;
  c.graph.inputs.push_back(test::input_info("a", a));
  c.graph.inputs.push_back(test::input_info("b", b));
  c.graph.nodes.push_back(make_node(op, {"a", "b"}, {"y"}, "op", op == "Concat" ? std::map<std::string, Attribute>{{"axis", test::int_attr(1)}} : std::map<std::string, Attribute>{}));
  c.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return c;
}

class OpErrorBounds : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override { g_mode = GetParam(); }
};

TEST_P(OpErrorBounds, LookupTableOpsRoundExactly) {
  int bits = GetParam().bits;
  for (const auto& c : {unary_case("Sigmoid", -6, 6), unary_case("Tanh", -3, 3), unary_case("HardSwish", -4, 4),
                        unary_case("Exp", -3, 2), unary_case("Erf", -2, 2), unary_case("Softplus", -5, 5),
                        unary_case("LeakyRelu", -2, 2), unary_case("Sqrt", 0.01f, 9), unary_case("HardSigmoid", -4, 4)})
    check_case(c, bits, 1000 + bits);
}

TEST_P(OpErrorBounds, TableAbsorbsFollowingScalarOps) {
  // (20) composed: 0.7 * HardSwish(x) + 0.24 (PP-LCNet's learnable affine), then 1 / (.) - 0.5:
  // one table, one rounding, so the bound stays 1/2 LSB of the last output.
  OpCase c = unary_case("HardSwish", -4, 4);
  c.graph.initializers["k1"] = Tensor::from_f32({0.7f}, {1});
  c.graph.initializers["k2"] = Tensor::from_f32({0.24f}, {1});
  c.graph.initializers["k3"] = Tensor::from_f32({0.5f}, {1});
  c.graph.nodes[0].outputs[0] = "h";
  c.graph.nodes.push_back(make_node("Mul", {"k1", "h"}, {"m"}, "mul"));
  c.graph.nodes.push_back(make_node("Add", {"m", "k2"}, {"y"}, "add"));
  check_case(c, GetParam().bits, 1900 + GetParam().bits);
  c.graph.nodes[2].outputs[0] = "a";
  c.graph.nodes.push_back(make_node("Sub", {"k3", "a"}, {"y"}, "sub"));  // constant first: 0.5 - a
  check_case(c, GetParam().bits, 1950 + GetParam().bits);
}

TEST_P(OpErrorBounds, ConvAndMatMul) {
  int bits = GetParam().bits;
  OpCase conv{"Conv", {}, {{"x", {2, 4, 9, 9}}}, {{"x", {-1, 1}}}};
  conv.graph.opsets[""] = 13;
  conv.graph.inputs.push_back(test::input_info("x", {-1, 4, 9, 9}));
  conv.graph.initializers["w"] = test::random_tensor({6, 2, 3, 3}, 77);
  conv.graph.initializers["b"] = test::random_tensor({6}, 78);
  conv.graph.nodes.push_back(make_node("Conv", {"x", "w", "b"}, {"y"}, "conv",
                                       {{"group", test::int_attr(2)}, {"pads", test::ints_attr({1, 1, 1, 1})},
                                        {"strides", test::ints_attr({2, 1})}}));
  conv.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  check_case(conv, bits, 2000 + bits);
  OpCase mm{"MatMul", {}, {{"x", {3, 5, 16}}}, {{"x", {-2, 2}}}};
  mm.graph.opsets[""] = 13;
  mm.graph.inputs.push_back(test::input_info("x", {3, 5, 16}));
  mm.graph.initializers["w"] = test::random_tensor({16, 8}, 79);
  mm.graph.nodes.push_back(make_node("MatMul", {"x", "w"}, {"y"}, "mm"));
  mm.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  check_case(mm, bits, 3000 + bits);
}

TEST_P(OpErrorBounds, AddSubMulConcatWithDifferentScales) {
  int bits = GetParam().bits;
  // Add/Sub bound: s_y * (1/2 + (|q_a| + |q_b|) 2^-(L+1)), L = 20 or 36: below 0.5 + 2^-4 LSB.
  check_case(binary_case("Add", {2, 3, 4, 5}, {1, 3, 1, 5}, 1.0f, 7.0f), bits, 4000 + bits, 1.0 / 16);
  check_case(binary_case("Sub", {2, 3, 4, 5}, {5}, 3.0f, 0.5f), bits, 4100 + bits, 1.0 / 16);
  check_case(binary_case("Mul", {2, 3, 4, 5}, {2, 3, 4, 5}, 2.0f, 5.0f), bits, 4200 + bits);
  check_case(binary_case("Concat", {2, 3, 4, 5}, {2, 2, 4, 5}, 1.0f, 9.0f), bits, 4300 + bits);
}

TEST_P(OpErrorBounds, DivOfTwoActivations) {
  int bits = GetParam().bits;
  // (32): the exact ratio rounded once; M's 31-bit multiplier adds |q_y| 2^-31 LSB.
  OpCase d = binary_case("Div", {2, 3, 4, 5}, {1, 3, 1, 5}, 2.0f, 1.0f);
  d.input_ranges["b"] = {0.25f, 4.0f};
  check_case(d, bits, 4400 + bits, 1.0 / 16);
  OpCase neg = binary_case("Div", {2, 3, 4, 5}, {2, 3, 4, 5}, 1.0f, 1.0f);
  neg.input_ranges["b"] = {-3.0f, -0.5f};
  check_case(neg, bits, 4500 + bits, 1.0 / 16);
}

TEST_P(OpErrorBounds, ReduceMeanAndSum) {
  int bits = GetParam().bits;
  // (31): exact integer sum, one rounding of an exact ratio: s_y (1/2 + 2^-31 |a M / count|),
  // below s_y (1/2 + 2^-15) for 16-bit codes.
  check_case(unary_case("ReduceMean", -1, 3, {{"axes", test::ints_attr({2, 3})}}), bits, 5200 + bits, 1.0 / 1024);
  check_case(unary_case("ReduceMean", -2, 2, {{"axes", test::ints_attr({1})}, {"keepdims", test::int_attr(0)}}), bits,
             5300 + bits, 1.0 / 1024);
  OpCase noop = unary_case("ReduceSum", -1, 1, {{"noop_with_empty_axes", test::int_attr(1)}});  // the input, requantized
  check_case(noop, bits, 5600 + bits, 1.0 / 1024);
  OpCase sum = unary_case("ReduceSum", -1, 1);  // opset 11: axes as an attribute
  sum.graph.opsets[""] = 11;
  sum.graph.nodes[0] = make_node("ReduceSum", {"x"}, {"y"}, "op", {{"axes", test::ints_attr({3})}}, 11);
  check_case(sum, bits, 5400 + bits, 1.0 / 16);
  OpCase sum13 = unary_case("ReduceSum", -1, 1);  // opset 13: axes as a constant input
  sum13.graph.initializers["axes"] = Tensor::from_i64({1, 2}, {2});
  sum13.graph.nodes[0] = make_node("ReduceSum", {"x", "axes"}, {"y"}, "op", {{"keepdims", test::int_attr(0)}});
  check_case(sum13, bits, 5500 + bits, 1.0 / 16);
}

TEST_P(OpErrorBounds, PReluWithPerChannelSlopes) {
  int bits = GetParam().bits;
  // (33): one RQ either side: s_y (1/2 + 2^-31 |a| M).
  OpCase c = unary_case("PRelu", -2, 2);
  Tensor slope(DType::Float32, {3, 1, 1});
  slope.data<float>()[0] = 0.25f;
  slope.data<float>()[1] = -0.6f;  // negative slopes exist in trained PRelu nets
  slope.data<float>()[2] = 0.0f;   // a Relu channel
  c.graph.initializers["slope"] = slope;
  c.graph.nodes[0] = make_node("PRelu", {"x", "slope"}, {"y"}, "op");
  check_case(c, bits, 5600 + bits, 1.0 / 16);
}

TEST_P(OpErrorBounds, ResizeLinear) {
  int bits = GetParam().bits;
  // (34): weights on 2^-20, one RQ: s_y (1/2 + 2^-19 |q_x| + 2^-31 |a| M) < 1/2 + 1/16 LSB.
  OpCase up = unary_case("Resize", -1, 3);
  up.graph.initializers["scales"] = Tensor(DType::Float32, {4});
  for (int i = 0; i < 4; ++i) up.graph.initializers["scales"].data<float>()[i] = i < 2 ? 1.0f : (i == 2 ? 2.0f : 1.5f);
  up.graph.nodes[0] = make_node("Resize", {"x", "", "scales"}, {"y"}, "op", {{"mode", test::string_attr("linear")}});
  check_case(up, bits, 5700 + bits, 1.0 / 16);
  OpCase down = unary_case("Resize", -2, 2);
  down.graph.initializers["sizes"] = Tensor::from_i64({2, 3, 3, 4}, {4});
  down.graph.nodes[0] = make_node("Resize", {"x", "", "", "sizes"}, {"y"}, "op",
                                  {{"mode", test::string_attr("linear")},
                                   {"coordinate_transformation_mode", test::string_attr("align_corners")}});
  check_case(down, bits, 5800 + bits, 1.0 / 16);
}

TEST_P(OpErrorBounds, AveragePools) {
  int bits = GetParam().bits;
  // (19): as (31), s_y (1/2 + 2^-15) at most; windows at the border count fewer cells.
  check_case(unary_case("GlobalAveragePool", -1, 3), bits, 5000 + bits, 1.0 / 1024);
  check_case(unary_case("AveragePool", -1, 1,
                        {{"kernel_shape", test::ints_attr({3, 3})}, {"pads", test::ints_attr({1, 1, 1, 1})},
                         {"strides", test::ints_attr({2, 2})}}),
             bits, 5100 + bits, 1.0 / 1024);
  check_case(unary_case("AveragePool", -1, 1,
                        {{"kernel_shape", test::ints_attr({2, 3})}, {"pads", test::ints_attr({1, 0, 1, 2})},
                         {"count_include_pad", test::int_attr(1)}}),
             bits, 5150 + bits, 1.0 / 1024);
}

TEST_P(OpErrorBounds, ConvTransposeAndMatMulOfTwoActivations) {
  int bits = GetParam().bits;
  OpCase ct{"ConvTranspose", {}, {{"x", {2, 4, 5, 6}}}, {{"x", {-1, 1}}}};
  ct.graph.opsets[""] = 13;
  ct.graph.inputs.push_back(test::input_info("x", {-1, 4, 5, 6}));
  ct.graph.initializers["w"] = test::random_tensor({4, 3, 3, 2}, 81);  // group 2: 6 output channels
  ct.graph.initializers["b"] = test::random_tensor({6}, 82);
  ct.graph.nodes.push_back(make_node("ConvTranspose", {"x", "w", "b"}, {"y"}, "deconv",
                                     {{"group", test::int_attr(2)}, {"strides", test::ints_attr({2, 2})},
                                      {"pads", test::ints_attr({1, 0, 0, 1})}, {"output_padding", test::ints_attr({1, 0})}}));
  ct.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  check_case(ct, bits, 6000 + bits);
  // (21): exact integer products, one rounding: 1/2 LSB (+ 2^-31 relative multiplier error).
  OpCase mm{"MatMul2", {}, {{"a", {2, 1, 5, 16}}, {"b", {3, 16, 7}}}, {{"a", {-2, 2}}, {"b", {-1, 3}}}};
  mm.graph.opsets[""] = 13;
  mm.graph.inputs.push_back(test::input_info("a", {2, 1, 5, 16}));
  mm.graph.inputs.push_back(test::input_info("b", {3, 16, 7}));
  mm.graph.nodes.push_back(make_node("MatMul", {"a", "b"}, {"y"}, "mm"));
  mm.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  check_case(mm, bits, 6100 + bits);
}

TEST_P(OpErrorBounds, SoftmaxAndLayerNorm) {
  int bits = GetParam().bits;
  // Softmax (25): s_y (1/2 + Q (N + 1) 2^-31); N = 7, Q <= 65535: below 0.5 + 2^-12 LSB.
  check_case(unary_case("Softmax", -6, 6, {{"axis", test::int_attr(1)}}), bits, 7000 + bits, 1.0 / 4096);
  check_case(unary_case("Softmax", -3, 3), bits, 7010 + bits, 1.0 / 4096);
  // LayerNormalization (30): s_y (1/2 + |q_y| 2^-16): below 0.5 + 2^-1 LSB at 16 bits.
  OpCase ln{"LayerNormalization", {}, {{"x", {2, 6, 24}}}, {{"x", {-3, 5}}}};
  ln.graph.opsets[""] = 17;
  ln.graph.inputs.push_back(test::input_info("x", {2, 6, 24}));
  ln.graph.initializers["gamma"] = test::random_tensor({24}, 83, -2, 2);
  ln.graph.initializers["beta"] = test::random_tensor({24}, 84);
  ln.graph.nodes.push_back(make_node("LayerNormalization", {"x", "gamma", "beta"}, {"y"}, "ln",
                                     {{"epsilon", test::float_attr(1e-5f)}}, 17));
  ln.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  check_case(ln, bits, 7100 + bits, 0.5);
  // InstanceNormalization (§5.19): (30) over (n, c) planes, per-channel gamma/beta; same bound.
  OpCase in{"InstanceNormalization", {}, {{"x", {2, 5, 6, 7}}}, {{"x", {-3, 5}}}};
  in.graph.opsets[""] = 17;
  in.graph.inputs.push_back(test::input_info("x", {2, 5, 6, 7}));
  in.graph.initializers["gamma"] = test::random_tensor({5}, 85, -2, 2);
  in.graph.initializers["beta"] = test::random_tensor({5}, 86);
  in.graph.nodes.push_back(make_node("InstanceNormalization", {"x", "gamma", "beta"}, {"y"}, "in",
                                     {{"epsilon", test::float_attr(1e-5f)}}, 17));
  in.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  check_case(in, bits, 7150 + bits, 0.5);
  check_case(unary_case("Gelu", -4, 4), bits, 7200 + bits);
  // ReduceMax/Min move codes (the map (1) is monotonic): exact.
  check_case(unary_case("ReduceMax", -3, 3, {{"axes", test::ints_attr({1, 3})}}), bits, 7300 + bits);
  check_case(unary_case("ReduceMin", -3, 3, {{"axes", test::ints_attr({-1})}, {"keepdims", test::int_attr(0)}}), bits, 7310 + bits);
}

INSTANTIATE_TEST_SUITE_P(Bits, OpErrorBounds, ::testing::Values(Mode{8, false}, Mode{16, false}, Mode{8, true}));

}  // namespace
}  // namespace fixpoint
