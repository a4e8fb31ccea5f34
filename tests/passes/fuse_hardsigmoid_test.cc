#include "pass_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

Graph hsig_graph(bool div) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 3, 5}));
  g.initializers["three"] = Tensor::scalar_f32(3);
  g.initializers["zero"] = Tensor::scalar_f32(0);
  g.initializers["six"] = Tensor::scalar_f32(6);
  g.initializers["sixth"] = Tensor::scalar_f32(1.0f / 6);
  g.nodes.push_back(make_node("Add", {"x", "three"}, {"a"}, "add"));
  g.nodes.push_back(make_node("Clip", {"a", "zero", "six"}, {"c"}, "clip"));
  if (div) g.nodes.push_back(make_node("Div", {"c", "six"}, {"h"}, "div"));
  else g.nodes.push_back(make_node("Mul", {"sixth", "c"}, {"h"}, "div"));
  g.nodes.push_back(make_node("Mul", {"h", "w"}, {"y"}, "gate"));  // gates another tensor: not HardSwish
  g.inputs.push_back(test::input_info("w", {2, 3, 5}));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

TEST(FuseHardSigmoid, DivAndMulForms) {
  std::map<std::string, Tensor> in = {{"x", test::random_tensor({2, 3, 5}, 1, -5, 5)}, {"w", test::random_tensor({2, 3, 5}, 2)}};
  for (bool div : {true, false}) {
    Graph g = test::rewrite_and_check(hsig_graph(div), make_fuse_hardsigmoid(), in, 1);
    ASSERT_EQ(g.nodes.size(), 2u) << g.dump();
    EXPECT_EQ(g.nodes[0].op_type, "HardSigmoid");
    EXPECT_EQ(g.nodes[0].inputs, std::vector<std::string>{"x"});
    EXPECT_NEAR(g.nodes[0].attr_float("alpha", 0), 1.0 / 6, 1e-7);
  }
}

TEST(FuseHardSigmoid, HardSwishPatternIsLeftToItsOwnPass) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 3, 5}));
  g.initializers["three"] = Tensor::scalar_f32(3);
  g.initializers["zero"] = Tensor::scalar_f32(0);
  g.initializers["six"] = Tensor::scalar_f32(6);
  g.nodes.push_back(make_node("Add", {"x", "three"}, {"a"}, "add"));
  g.nodes.push_back(make_node("Clip", {"a", "zero", "six"}, {"c"}, "clip"));
  g.nodes.push_back(make_node("Mul", {"x", "c"}, {"m"}, "mul"));
  g.nodes.push_back(make_node("Div", {"m", "six"}, {"y"}, "div"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  test::rewrite_and_check(g, make_fuse_hardsigmoid(), {{"x", test::random_tensor({2, 3, 5}, 3, -5, 5)}}, 0);
}

}  // namespace
}  // namespace fixpoint
