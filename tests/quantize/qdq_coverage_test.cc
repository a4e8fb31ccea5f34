// Imported QDQ models run as ONNX Runtime reads them (docs/arithmetic.md §2.6): a float tensor no
// QuantizeLinear/DequantizeLinear pair covers stays float (its producer runs on the CPU, with or
// without calibration), and an activation is not fused into an op whose own output has a pair
// of another encoding (the model rounds twice there).
#include <gtest/gtest.h>

#include "compile_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

// Q -> DQ on t with (scale, zero point) as uint8; returns the DequantizeLinear output.
std::string qdq(Graph& g, const std::string& t, float scale, uint8_t zp) {
  g.initializers[t + "_s"] = Tensor::from_f32({scale}, {});
  Tensor z(DType::UInt8, {});
  z.data<uint8_t>()[0] = zp;
  g.initializers[t + "_z"] = z;
  g.nodes.push_back(make_node("QuantizeLinear", {t, t + "_s", t + "_z"}, {t + "_q"}, t + "_Q"));
  g.nodes.push_back(make_node("DequantizeLinear", {t + "_q", t + "_s", t + "_z"}, {t + "_dq"}, t + "_DQ"));
  return t + "_dq";
}

// x -> [pair?] -> conv1 -> c1 -> pair -> conv2 -> y [-> pair? (without, the model leaves y float)].
Graph two_convs(bool input_pair, bool output_pair = false) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 2, 6, 6}));
  g.initializers["w1"] = test::random_tensor({3, 2, 3, 3}, 4);
  g.initializers["w2"] = test::random_tensor({4, 3, 1, 1}, 5);
  std::string x = input_pair ? qdq(g, "x", 1.0f / 64, 128) : "x";
  g.nodes.push_back(make_node("Conv", {x, "w1"}, {"c1"}, "conv1"));
  std::string c1 = qdq(g, "c1", 0.05f, 120);
  g.nodes.push_back(make_node("Conv", {c1, "w2"}, {output_pair ? "c2" : "y"}, "conv2"));
  if (output_pair) g.nodes.push_back(make_node("Identity", {qdq(g, "c2", 0.1f, 100)}, {"y"}, "out"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

const QOp& op_named(const Program& p, const std::string& name) {
  for (const auto& op : p.ops)
    if (op.node.name == name) return op;
  throw std::runtime_error("no op " + name);
}

TEST(QdqCoverage, AnOutputNoPairCoversStaysFloatWithOrWithoutCalibration) {
  std::vector<std::map<std::string, Tensor>> none, calib = {{{"x", test::random_tensor({1, 2, 6, 6}, 7, -1, 1)}}};
  for (const auto* samples : {&none, &calib}) {
    CompileResult r = test::compile_graph(two_convs(true), CompileOptions{}, *samples);
    EXPECT_EQ(r.report["calib_method"], samples->empty() ? "qdq" : "percentile");
    const QOp& conv1 = op_named(r.program, "conv1");
    const QOp& conv2 = op_named(r.program, "conv2");
    EXPECT_TRUE(conv1.is<params::Conv>());
    ASSERT_TRUE(conv2.is<params::Float>()) << "calibration samples: " << samples->size();
    EXPECT_NE(conv2.reason.find("no QuantizeLinear/DequantizeLinear pair covers output 'y'"), std::string::npos)
        << conv2.reason;
    EXPECT_EQ(r.program.tensors.at("c1").scale, static_cast<double>(0.05f));  // the pair's encoding
    EXPECT_EQ(r.program.tensors.at("c1").zero_point, 120);
    EXPECT_EQ(r.program.tensors.at("y").type, DType::Float32);  // no 8-bit encoding ONNX Runtime never applies
  }
}

TEST(QdqCoverage, AnInputNoPairCoversFeedsAFloatOp) {
  CompileResult r = test::compile_graph(two_convs(false, true), CompileOptions{}, {});
  EXPECT_EQ(r.program.tensors.at("x").type, DType::Float32);
  EXPECT_TRUE(op_named(r.program, "conv1").is<params::Float>());  // reads float x
  // conv1's output has a pair: the CPU result is quantized to it for the accelerator.
  EXPECT_EQ(r.program.tensors.at("c1").type, DType::UInt8);
  EXPECT_EQ(r.program.tensors.at("c1").zero_point, 120);
  EXPECT_TRUE(op_named(r.program, "conv2").is<params::Conv>());
}

// conv -> c (pair A) -> Relu -> r (pair B) -> output pair.
Graph conv_pair_relu_pair(float relu_scale, uint8_t relu_zp) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 2, 6, 6}));
  g.initializers["w"] = test::random_tensor({3, 2, 3, 3}, 4);
  std::string x = qdq(g, "x", 1.0f / 64, 128);
  g.nodes.push_back(make_node("Conv", {x, "w"}, {"c"}, "conv"));
  g.nodes.push_back(make_node("Relu", {qdq(g, "c", 0.05f, 120)}, {"r"}, "relu"));
  g.nodes.push_back(make_node("Identity", {qdq(g, "r", relu_scale, relu_zp)}, {"y"}, "out"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

TEST(QdqCoverage, ReluAfterAPairOfAnotherEncodingIsNotFused) {
  Program p = test::compile_graph(conv_pair_relu_pair(0.025f, 0), CompileOptions{}, {}).program;
  EXPECT_TRUE(op_named(p, "conv").fused.empty());
  EXPECT_EQ(p.tensors.at("c").scale, static_cast<double>(0.05f));  // the model's first rounding is kept
  EXPECT_FALSE(op_named(p, "relu").is<params::Float>());
  // The same encoding on both sides: one rounding either way, so the Relu becomes the clamp.
  Program same = test::compile_graph(conv_pair_relu_pair(0.05f, 120), CompileOptions{}, {}).program;
  EXPECT_EQ(op_named(same, "conv").fused, std::vector<std::string>{"relu"});
}

}  // namespace
}  // namespace fixpoint
