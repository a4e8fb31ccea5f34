// (7c): an output-aware factor on a calibrated 8-bit range (CompileOptions::range_factors, what
// --range-search chooses) scales that tensor's step and nothing else.
#include <gtest/gtest.h>

#include "compile_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

// x -> conv1 -> Relu (r, 8-bit, read by conv2) -> conv2 + bias 1 (s, lopsided signed, read by
// conv3) -> conv3 -> y.
Graph chain_graph() {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 4, 6, 6}));
  g.initializers["w1"] = test::random_tensor({4, 4, 1, 1}, 1);
  g.initializers["w2"] = test::random_tensor({4, 4, 1, 1}, 2, -0.5f, 0.5f);
  g.initializers["b2"] = test::random_tensor({4}, 3, 0.6f, 0.7f);
  g.initializers["w3"] = test::random_tensor({2, 4, 1, 1}, 4);
  g.nodes.push_back(make_node("Conv", {"x", "w1"}, {"c"}, "conv1"));
  g.nodes.push_back(make_node("Relu", {"c"}, {"r"}, "relu"));
  g.nodes.push_back(make_node("Conv", {"r", "w2", "b2"}, {"s"}, "conv2"));
  g.nodes.push_back(make_node("Conv", {"s", "w3"}, {"y"}, "conv3"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

std::vector<std::map<std::string, Tensor>> samples() {
  std::vector<std::map<std::string, Tensor>> calib;
  for (uint32_t i = 0; i < 3; ++i) calib.push_back({{"x", test::random_tensor({1, 4, 6, 6}, 70 + i, -2.0f, 2.9f)}});
  return calib;
}

TEST(RangeFactor, ScalesTheNamedTensorsStepOnly) {
  CompileOptions o;
  o.wide_intermediates = false;  // every tensor at 8 bits, so r is an 8-bit tensor of its own
  o.channel_equalization = false;  // s keeps the lopsided range its bias gives it (7d would rescale it)
  Program base = test::compile_graph(chain_graph(), o, samples()).program;
  o.range_factors = {{"r", 0.5}};
  Program half = test::compile_graph(chain_graph(), o, samples()).program;
  ASSERT_EQ(half.tensors.at("r").type, base.tensors.at("r").type);
  EXPECT_DOUBLE_EQ(half.tensors.at("r").scale, 0.5 * base.tensors.at("r").scale);  // (7c) on (7)
  EXPECT_DOUBLE_EQ(half.tensors.at("s").scale, base.tensors.at("s").scale);
  EXPECT_EQ(half.tensors.at("s").zero_point, base.tensors.at("s").zero_point);
  // A zero-point tensor: (8a)'s clipped ends [lo, hi] both scale about 0, so its step does, and
  // (8b) puts the scaled low end on code 0.
  o.range_factors = {{"s", 2.0}};
  Program wide = test::compile_graph(chain_graph(), o, samples()).program;
  const QParams& q = wide.tensors.at("s");
  const QParams& q0 = base.tensors.at("s");
  ASSERT_EQ(q0.type, DType::UInt8);
  ASSERT_GE(q0.zero_point, 1);
  ASSERT_EQ(q.type, DType::UInt8);
  EXPECT_EQ(q.zero_point, q0.zero_point);   // (8b): k whole steps below 0 either way
  EXPECT_NEAR(q.scale, 2.0 * q0.scale, 1e-12 * q0.scale);
  EXPECT_DOUBLE_EQ(wide.tensors.at("r").scale, base.tensors.at("r").scale);
  // 16-bit tensors are not searched: a factor on one changes nothing.
  o.bits = 16;
  o.range_factors = {};
  Program b16 = test::compile_graph(chain_graph(), o, samples()).program;
  o.range_factors = {{"r", 0.5}};
  EXPECT_DOUBLE_EQ(test::compile_graph(chain_graph(), o, samples()).program.tensors.at("r").scale,
                   b16.tensors.at("r").scale);
}

}  // namespace
}  // namespace fixpoint
