// Activation fusion (src/quantize/activation_fusion.cc): a Relu/Clip read only by a Conv becomes
// its output clamp (§5.1), unless the user keeps it on the CPU; clip bounds from inputs or attributes.
#include <gtest/gtest.h>

#include <cmath>

#include "compile_test_util.h"
#include "fixpoint/graph_match.h"
#include "quantize/activation_fusion.h"

namespace fixpoint {
namespace {

using test::make_node;

Graph conv_clip() {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 2, 5, 5}));
  g.initializers["w"] = test::random_tensor({3, 2, 3, 3}, 9);
  g.initializers["lo"] = Tensor::from_f32({0.0f}, {});
  g.initializers["hi"] = Tensor::from_f32({0.5f}, {});
  g.nodes.push_back(make_node("Conv", {"x", "w"}, {"c"}, "conv"));
  g.nodes.push_back(make_node("Clip", {"c", "lo", "hi"}, {"y"}, "clip"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

std::vector<std::map<std::string, Tensor>> calib() { return {{{"x", test::random_tensor({1, 2, 5, 5}, 21, -2, 2)}}}; }

TEST(ActivationFusion, ClipBecomesTheConvsClamp) {
  Program p = test::compile_graph(conv_clip(), CompileOptions{}, calib()).program;
  ASSERT_EQ(p.ops.size(), 1u);
  const QOp& conv = p.ops[0];
  EXPECT_EQ(conv.fused, std::vector<std::string>{"clip"});
  EXPECT_EQ(conv.node.outputs[0], "y");
  const QParams& qy = p.tensors.at("y");
  EXPECT_EQ(qy.type, DType::UInt8);  // fused Clip >= 0: unsigned output
  const auto& pc = conv.as<params::Conv>();
  EXPECT_EQ(pc.lo, qy.zero_point);
  EXPECT_EQ(pc.hi, static_cast<int64_t>(std::floor(0.5 / qy.scale + 0.5)) + qy.zero_point);
}

TEST(ActivationFusion, AClipTheUserKeepsOnTheCpuIsNotFused) {
  CompileOptions o;
  o.deny = {"clip"};
  Program p = test::compile_graph(conv_clip(), o, calib()).program;
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_TRUE(p.ops[0].fused.empty());
  EXPECT_TRUE(p.ops[1].is<params::Float>());
}

TEST(ActivationFusion, ClipBoundsFromInputsAttributesAndRelu) {
  Graph g = conv_clip();
  double lo, hi;
  ASSERT_TRUE(match::clip_bounds(g, g.nodes[1], &lo, &hi));
  EXPECT_EQ(lo, 0.0);
  EXPECT_EQ(hi, 0.5);
  Node old = make_node("Clip", {"c"}, {"y"}, "old", {{"min", test::float_attr(-1)}, {"max", test::float_attr(6)}}, 6);
  ASSERT_TRUE(match::clip_bounds(g, old, &lo, &hi));
  EXPECT_EQ(lo, -1.0);
  EXPECT_EQ(hi, 6.0);
  ASSERT_TRUE(match::clip_bounds(g, make_node("Relu", {"c"}, {"r"}), &lo, &hi));
  EXPECT_EQ(lo, 0.0);
  EXPECT_TRUE(std::isinf(hi));
  EXPECT_FALSE(match::clip_bounds(g, make_node("Clip", {"c", "x"}, {"z"}), &lo, &hi));  // a bound that is no constant
}

}  // namespace
}  // namespace fixpoint
