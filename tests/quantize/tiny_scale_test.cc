// docs/arithmetic.md §4: a tiny input scale (features near 1e-11, a bias-dominated output) makes
// large bias codes and tiny multipliers. The layer widens and keeps the bias exactly instead of
// clipping it to int32 and losing the output (issue: all-zero outputs where float is the bias).
#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "fixpoint/fixedpoint.h"
#include "fixpoint/program_runner.h"
#include "fixpoint/runtime.h"

namespace fixpoint {
namespace {

using test::make_node;

// Conv with weights ~scale -> Relu -> GlobalAveragePool -> Flatten -> Gemm with a bias of +-0.03.
Graph tiny_feature_classifier(float scale) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 3, 8, 8}));
  Tensor w1 = test::random_tensor({8, 3, 3, 3}, 11);
  for (int64_t i = 0; i < w1.numel(); ++i) w1.data<float>()[i] *= scale;
  g.initializers["w1"] = w1;
  g.initializers["w2"] = test::random_tensor({10, 8}, 12);
  g.initializers["b2"] = test::random_tensor({10}, 13, -0.03f, 0.03f);
  g.nodes.push_back(make_node("Conv", {"x", "w1"}, {"c"}, "conv", {{"pads", test::ints_attr({1, 1, 1, 1})}}));
  g.nodes.push_back(make_node("Relu", {"c"}, {"r"}, "relu"));
  g.nodes.push_back(make_node("GlobalAveragePool", {"r"}, {"p"}, "gap"));
  g.nodes.push_back(make_node("Flatten", {"p"}, {"f"}, "flatten"));
  g.nodes.push_back(make_node("Gemm", {"f", "w2", "b2"}, {"y"}, "fc", {{"transB", test::int_attr(1)}}));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

TEST(TinyScales, BiasSurvivesTinyInputScales) {
  for (int bits : {8, 16}) {
    for (float scale : {1e-11f, 1e-20f}) {
      SCOPED_TRACE(cat(bits, "-bit, feature scale ", scale));
      Graph g = tiny_feature_classifier(scale);
      std::vector<std::map<std::string, Tensor>> calib;
      for (uint32_t s = 0; s < 4; ++s) calib.push_back({{"x", test::random_tensor({1, 3, 8, 8}, 20 + s)}});
      CompileOptions o;
      o.bits = bits;
      CompileResult r = test::compile_graph(g, o, calib);
      Tensor x = calib[0].at("x");
      Tensor want = Executor(g).run({{"x", x}}).at("y");
      Tensor got = ProgramRunner(r.program).run({{"x", x}}).values.at("y");
      // The output is the bias (the features are ~1e-11): within half an output step plus the
      // bias's own rounding; the output scale is max|b2| / 127 (or / 32767).
      double step = 0.03 / (bits == 8 ? 127.0 : 32767.0);
      double worst = 0;
      for (int64_t i = 0; i < want.numel(); ++i)
        worst = std::max(worst, std::abs(static_cast<double>(got.data<float>()[i]) - want.data<float>()[i]));
      EXPECT_LE(worst, 1.5 * step);
      EXPECT_TRUE(r.report["precision_warnings"].empty()) << r.report["precision_warnings"].dump();
    }
  }
}

TEST(TinyScales, UnrepresentableBiasIsReportedNotSilent) {
  // QDQ pairs fix the Gemm input's scale at 1e-30 and its weights' scale (encodings the compiler
  // may not change): its bias codes b / (s_x s_w) lie beyond int64. The compiler names the layer.
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 8}));
  g.initializers["s"] = Tensor::from_f32({1e-30f}, {});
  g.initializers["z"] = Tensor(DType::Int8, {});
  Tensor wq(DType::Int8, {10, 8});
  for (int64_t i = 0; i < wq.numel(); ++i) wq.data<int8_t>()[i] = static_cast<int8_t>(i % 200 - 100);
  g.initializers["wq"] = wq;
  g.initializers["ws"] = Tensor::from_f32({0.01f}, {});
  g.initializers["b2"] = test::random_tensor({10}, 13, -0.03f, 0.03f);
  g.nodes.push_back(make_node("QuantizeLinear", {"x", "s", "z"}, {"xq"}, "q"));
  g.nodes.push_back(make_node("DequantizeLinear", {"xq", "s", "z"}, {"xd"}, "dq"));
  g.nodes.push_back(make_node("DequantizeLinear", {"wq", "ws"}, {"w2"}, "wdq"));
  g.nodes.push_back(make_node("Gemm", {"xd", "w2", "b2"}, {"g"}, "fc", {{"transB", test::int_attr(1)}}));
  // (the Gemm's output needs a pair too: a tensor no pair covers stays float in a QDQ model)
  g.initializers["sy"] = Tensor::from_f32({0.001f}, {});
  g.nodes.push_back(make_node("QuantizeLinear", {"g", "sy", "z"}, {"gq"}, "qy"));
  g.nodes.push_back(make_node("DequantizeLinear", {"gq", "sy", "z"}, {"y"}, "dqy"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  Tensor x = test::random_tensor({1, 8}, 30);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 1e-28f;
  CompileOptions o;
  CompileResult r = test::compile_graph(g, o, {{{"x", x}}});
  const auto& w = r.report["precision_warnings"];
  ASSERT_FALSE(w.empty());
  EXPECT_EQ(w[0]["layer"], "fc");
  EXPECT_NE(w[0]["detail"].get<std::string>().find("bias"), std::string::npos) << w.dump();
  EXPECT_NE(r.report_text.find("precision warnings"), std::string::npos);
}

TEST(TinyScales, MultiplierKeepsItsBitsInWideLayers) {
  // (12) with n up to 125: M = 2^-80 keeps m in [2^30, 2^31); with the int64 bound n <= 62 it
  // would have only 31 - 18 = 13 significant bits.
  fx::Multiplier wide = fx::make_multiplier(std::ldexp(1.37, -80), false, fx::kMaxShift128);
  EXPECT_GE(wide.m, int64_t{1} << 30);
  EXPECT_LT(wide.m, int64_t{1} << 31);
  EXPECT_NEAR(wide.value() / std::ldexp(1.37, -80), 1.0, 1e-9);
  fx::Multiplier narrow = fx::make_multiplier(std::ldexp(1.37, -80), false);
  EXPECT_EQ(narrow.n, fx::kMaxShift64);
  EXPECT_LT(narrow.m, int64_t{1} << 14);
}

}  // namespace
}  // namespace fixpoint
