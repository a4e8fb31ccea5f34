// QDQ export (src/debug/qdq_export.cc): the program's encodings as Q/DQ pairs, its weight and
// bias codes through DequantizeLinear, a fused clamp as a Clip, a table op as a Gather over its
// table; run by the float reference executor (ONNX's Q/DQ semantics) it gives the program's
// codes to within one step.
#include <gtest/gtest.h>

#include <cmath>

#include "../quantize/compile_test_util.h"
#include "fixpoint/fixedpoint.h"
#include "fixpoint/qdq_export.h"
#include "fixpoint/program_runner.h"
#include "fixpoint/runtime.h"

namespace fixpoint {
namespace {

using test::make_node;

// x -> Conv(w, b) -> Clip(-0.2, 0.5) -> Sigmoid -> y
Graph conv_clip_sigmoid(int opset) {
  Graph g;
  g.opsets[""] = opset;
  g.inputs.push_back(test::input_info("x", {1, 2, 6, 6}));
  g.initializers["w"] = test::random_tensor({3, 2, 3, 3}, 9);
  g.initializers["b"] = test::random_tensor({3}, 10, -0.2f, 0.2f);
  g.nodes.push_back(make_node("Conv", {"x", "w", "b"}, {"c"}, "conv", {{"pads", Attribute::of_ints({1, 1, 1, 1})}}, opset));
  if (opset >= 11) {
    g.initializers["lo"] = Tensor::scalar_f32(-0.2f);
    g.initializers["hi"] = Tensor::scalar_f32(0.5f);
    g.nodes.push_back(make_node("Clip", {"c", "lo", "hi"}, {"r"}, "clip", {}, opset));
  } else {
    g.nodes.push_back(make_node("Clip", {"c"}, {"r"}, "clip",
                                {{"min", Attribute::of_float(-0.2f)}, {"max", Attribute::of_float(0.5f)}}, opset));
  }
  g.nodes.push_back(make_node("Sigmoid", {"r"}, {"y"}, "sigmoid", {}, opset));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

Program compiled(int opset) {
  std::vector<std::map<std::string, Tensor>> calib;
  for (uint32_t i = 0; i < 3; ++i) calib.push_back({{"x", test::random_tensor({1, 2, 6, 6}, 20 + i, -2, 2)}});
  CompileOptions o;
  o.wide_intermediates = false;  // every tensor 8-bit: ONNX's own Q/DQ, which the executor runs
  o.asymmetric = false;          // r symmetric on [-0.5, 0.5]: the clamp's -0.2 is narrower than its codes
  return test::compile_graph(conv_clip_sigmoid(opset), o, calib).program;
}

const Node* find(const Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

TEST(QdqExport, PairsWeightsClampAndTableAreTheProgramsOwn) {
  Program p = compiled(13);
  Graph g = qdq_graph(p);
  const auto& conv = p.ops[0].as<params::Conv>();
  // One pair per tensor with codes, with its scale and zero point.
  for (const char* t : {"x", "r", "y"}) {
    ASSERT_TRUE(find(g, std::string(t) + "/QuantizeLinear")) << t;
    EXPECT_EQ(g.initializers.at(std::string(t) + "/scale").get_f64(0), static_cast<float>(p.tensors.at(t).scale));
    EXPECT_EQ(g.initializers.at(std::string(t) + "/zero_point").dtype(), p.tensors.at(t).type);
    EXPECT_EQ(find(g, std::string(t) + "/QuantizeLinear")->domain, "");
  }
  // Weights: the program's codes and per-channel scales along axis 0; bias: int32 codes.
  const Tensor& wq = g.initializers.at("conv/weight/quantized");
  ASSERT_EQ(wq.dtype(), DType::Int8);
  for (int64_t i = 0; i < wq.numel(); ++i) ASSERT_EQ(wq.get_f64(i), conv.weight.get_f64(i));
  EXPECT_EQ(g.initializers.at("conv/weight/scale").numel(), 3);
  EXPECT_EQ(find(g, "conv/weight/DequantizeLinear")->attr_int("axis", -1), 0);
  const Tensor& bq = g.initializers.at("conv/bias/quantized");
  ASSERT_EQ(bq.dtype(), DType::Int32);
  for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(bq.get_f64(c), conv.bias.get_f64(c));
  // The fused Clip: real bounds of the clamp codes (-0.2 on r's grid).
  const Node* clip = find(g, "conv/Clip");
  ASSERT_TRUE(clip);
  const QParams& qr = p.tensors.at("r");
  ASSERT_GT(conv.lo, fx::range_of(qr.type).lo);
  EXPECT_FLOAT_EQ(g.initializers.at(clip->inputs[1]).get_f64(0),
                  static_cast<float>((conv.lo - qr.zero_point) * qr.scale));
  EXPECT_NEAR(g.initializers.at(clip->inputs[1]).get_f64(0), -0.2, qr.scale / 2);
  // The table: Gather over the real values of the program's table codes.
  ASSERT_TRUE(find(g, "sigmoid/Gather"));
  const auto& table = p.ops[1].as<params::Table>().table;
  const Tensor& values = g.initializers.at("sigmoid/table");
  const QParams& qy = p.tensors.at("y");
  for (int64_t i = 0; i < table.numel(); ++i)
    ASSERT_EQ(values.get_f64(i), static_cast<float>((table.get_f64(i) - qy.zero_point) * qy.scale)) << i;
}

TEST(QdqExport, RunAsOnnxItGivesTheProgramsCodesWithinOneStep) {
  Program p = compiled(13);
  Executor onnx_run(qdq_graph(p));
  ProgramRunner runner(p);
  const QParams& qy = p.tensors.at("y");
  int64_t same = 0, total = 0;
  for (uint32_t seed = 0; seed < 4; ++seed) {
    Tensor x = test::random_tensor({1, 2, 6, 6}, 100 + seed, -2, 2);
    Tensor want = runner.run({{"x", x}}).values.at("y"), got = onnx_run.run({{"x", x}}).at("y");
    ASSERT_EQ(got.numel(), want.numel());
    for (int64_t i = 0; i < got.numel(); ++i) {
      double steps = std::rint(std::abs(got.get_f64(i) - want.get_f64(i)) / qy.scale);
      ASSERT_LE(steps, 1.0) << "seed " << seed << " element " << i;
      same += steps == 0;
      ++total;
    }
  }
  EXPECT_GE(static_cast<double>(same) / static_cast<double>(total), 0.99) << same << " of " << total;
}

TEST(QdqExport, OlderOpsetsUseOnnxRuntimesQdqAndAttributeClips) {
  Program p = compiled(9);
  Graph g = qdq_graph(p);
  EXPECT_EQ(g.opsets.at(""), 9);
  EXPECT_EQ(g.opsets.at("com.microsoft"), 1);
  EXPECT_EQ(find(g, "r/QuantizeLinear")->domain, "com.microsoft");
  const Node* clip = find(g, "conv/Clip");
  ASSERT_TRUE(clip);
  EXPECT_EQ(clip->inputs.size(), 1u);
  EXPECT_TRUE(clip->has_attr("max"));
}

TEST(QdqExport, AFloatReferenceHasNothingToExport) {
  std::vector<std::map<std::string, Tensor>> none;
  CompileOptions o;
  o.bits = 32;
  Program p = test::compile_graph(conv_clip_sigmoid(13), o, none).program;
  try {
    qdq_graph(p);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("float reference program (--bits 32) has no quantization"), std::string::npos);
  }
}

}  // namespace
}  // namespace fixpoint
