#include <gtest/gtest.h>

#include "fixpoint/passes.h"
#include "fixpoint/runtime.h"
#include "test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

void expect_single_hardswish(Graph g) {
  Tensor x = test::random_tensor({2, 3, 4, 5}, 9, -6.0f, 6.0f);
  Tensor before = Executor(g).run({{"x", x}}).at("y");
  PassLog log;
  EXPECT_EQ(make_fuse_hardswish()->run(g, log), 1);
  make_dead_node_elimination()->run(g, log);
  g.validate();
  ASSERT_EQ(g.nodes.size(), 2u) << g.dump();
  EXPECT_EQ(g.nodes[1].op_type, "HardSwish");
  EXPECT_EQ(g.nodes[1].inputs[0], "x1");
  EXPECT_EQ(g.nodes[1].outputs[0], "y");
  EXPECT_LE(test::max_rel_err(before, Executor(g).run({{"x", x}}).at("y")), 1e-5);
}

Graph base() {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 3, 4, 5}));
  g.nodes.push_back(make_node("Neg", {"x"}, {"x1"}, "neg"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

TEST(FuseHardSwish, DivForm) {
  Graph g = base();
  g.initializers["three"] = Tensor::scalar_f32(3);
  g.initializers["zero"] = Tensor::scalar_f32(0);
  g.initializers["six"] = Tensor::scalar_f32(6);
  g.nodes.push_back(make_node("Add", {"x1", "three"}, {"a"}, "add"));
  g.nodes.push_back(make_node("Clip", {"a", "zero", "six"}, {"c"}, "clip"));
  g.nodes.push_back(make_node("Mul", {"x1", "c"}, {"m"}, "mul"));
  g.nodes.push_back(make_node("Div", {"m", "six"}, {"y"}, "div"));
  expect_single_hardswish(g);
}

TEST(FuseHardSwish, Opset9ClipAttributesAndMulByOneSixth) {
  Graph g = base();
  g.initializers["three"] = Tensor::scalar_f32(3);
  g.initializers["sixth"] = Tensor::scalar_f32(1.0f / 6);
  g.nodes.push_back(make_node("Add", {"three", "x1"}, {"a"}, "add", {}, 9));
  g.nodes.push_back(make_node("Clip", {"a"}, {"c"}, "clip", {{"min", test::float_attr(0)}, {"max", test::float_attr(6)}}, 9));
  g.nodes.push_back(make_node("Mul", {"c", "x1"}, {"m"}, "mul", {}, 9));
  g.nodes.push_back(make_node("Mul", {"m", "sixth"}, {"y"}, "scale", {}, 9));
  expect_single_hardswish(g);
}

TEST(FuseHardSwish, HardSigmoidForm) {
  Graph g = base();
  g.nodes.push_back(make_node("HardSigmoid", {"x1"}, {"h"}, "hsig",
                              {{"alpha", test::float_attr(1.0f / 6)}, {"beta", test::float_attr(0.5f)}}));
  g.nodes.push_back(make_node("Mul", {"x1", "h"}, {"y"}, "mul"));
  expect_single_hardswish(g);
}

TEST(FuseHardSwish, LeavesOtherPatternsAlone) {
  Graph g = base();
  g.nodes.push_back(make_node("HardSigmoid", {"x1"}, {"h"}, "hsig"));  // Paddle's alpha 0.2: not HardSwish
  g.nodes.push_back(make_node("Mul", {"x1", "h"}, {"y"}, "mul"));
  PassLog log;
  EXPECT_EQ(make_fuse_hardswish()->run(g, log), 0);
  Graph h = base();
  h.initializers["three"] = Tensor::scalar_f32(3);
  h.initializers["zero"] = Tensor::scalar_f32(0);
  h.initializers["six"] = Tensor::scalar_f32(6);
  h.nodes.push_back(make_node("Add", {"x1", "three"}, {"a"}, "add"));
  h.nodes.push_back(make_node("Clip", {"a", "zero", "six"}, {"c"}, "clip"));
  h.nodes.push_back(make_node("Mul", {"x1", "c"}, {"m"}, "mul"));
  h.nodes.push_back(make_node("Div", {"m", "six"}, {"y"}, "div"));
  h.nodes.push_back(make_node("Relu", {"c"}, {"y2"}, "other_reader"));  // the Clip is read elsewhere
  h.outputs.push_back(ValueInfo{"y2", DType::Float32, std::nullopt});
  EXPECT_EQ(make_fuse_hardswish()->run(h, log), 0);
}

TEST(DivByConstant, BecomesMulByReciprocal) {
  Graph g = base();
  g.initializers["c"] = Tensor::from_f32({2, 4, 8, 3, 7}, {5});
  g.nodes.push_back(make_node("Div", {"x1", "c"}, {"y"}, "div"));
  Tensor x = test::random_tensor({2, 3, 4, 5}, 4);
  Tensor before = Executor(g).run({{"x", x}}).at("y");
  PassLog log;
  EXPECT_EQ(make_div_by_constant()->run(g, log), 1);
  EXPECT_EQ(g.nodes[1].op_type, "Mul");
  EXPECT_FLOAT_EQ(g.initializers.at(g.nodes[1].inputs[1]).data<float>()[1], 0.25f);
  EXPECT_LE(test::max_rel_err(before, Executor(g).run({{"x", x}}).at("y")), 1e-6);
  Graph z = base();
  z.initializers["c"] = Tensor::from_f32({0}, {1});
  z.nodes.push_back(make_node("Div", {"x1", "c"}, {"y"}, "div"));
  EXPECT_EQ(make_div_by_constant()->run(z, log), 0);
}

}  // namespace
}  // namespace fixpoint
