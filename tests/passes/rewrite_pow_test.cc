#include "pass_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

Graph pow_graph(float e) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 3, 4}));
  g.initializers["e"] = Tensor::scalar_f32(e);
  g.nodes.push_back(make_node("Abs", {"x"}, {"a"}, "abs"));
  g.nodes.push_back(make_node("Pow", {"a", "e"}, {"p"}, "pow"));
  g.nodes.push_back(make_node("Neg", {"p"}, {"y"}, "neg"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

TEST(RewritePow, SquareBecomesMulOfItself) {
  Tensor x = test::random_tensor({2, 3, 4}, 1, -3, 3);
  PassLog log;
  Graph g = test::rewrite_and_check(pow_graph(2), make_rewrite_pow(), {{"x", x}}, 1, &log);
  EXPECT_EQ(test::count_op(g, "Pow"), 0);
  ASSERT_EQ(test::count_op(g, "Mul"), 1);
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<std::string>{"a", "a"}));
  ASSERT_EQ(log.entries.size(), 1u);
  EXPECT_EQ(log.entries[0].nodes, std::vector<std::string>{"pow"});
}

TEST(RewritePow, HalfBecomesSqrtAndMinusOneReciprocal) {
  Tensor x = test::random_tensor({2, 3, 4}, 2, 0.1f, 3);
  Graph g = test::rewrite_and_check(pow_graph(0.5f), make_rewrite_pow(), {{"x", x}}, 1);
  EXPECT_EQ(test::count_op(g, "Sqrt"), 1);
  EXPECT_EQ(g.nodes[1].inputs.size(), 1u);
  g = test::rewrite_and_check(pow_graph(-1.0f), make_rewrite_pow(), {{"x", x}}, 1);
  EXPECT_EQ(test::count_op(g, "Reciprocal"), 1);
}

TEST(RewritePow, ExponentOneIsRemovedEvenBeforeAGraphOutput) {
  Tensor x = test::random_tensor({2, 3, 4}, 3);
  Graph g = test::rewrite_and_check(pow_graph(1), make_rewrite_pow(), {{"x", x}}, 1);
  EXPECT_EQ(g.nodes.size(), 2u);
  Graph h = pow_graph(1);
  h.nodes.pop_back();
  h.outputs[0].name = "p";
  h = test::rewrite_and_check(h, make_rewrite_pow(), {{"x", x}}, 1);
  ASSERT_EQ(h.nodes.size(), 1u);
  EXPECT_EQ(h.nodes[0].outputs[0], "p");  // the graph output keeps its name
}

TEST(RewritePow, LeavesOtherExponentsAndTensorExponents) {
  Tensor x = test::random_tensor({2, 3, 4}, 4, 0.1f, 2);
  test::rewrite_and_check(pow_graph(3), make_rewrite_pow(), {{"x", x}}, 0);
  Graph g = pow_graph(2);
  g.initializers["e"] = Tensor::from_f32({2, 2}, {2, 1, 1});  // broadcasts: not a scalar
  test::rewrite_and_check(g, make_rewrite_pow(), {{"x", x}}, 0);
}

}  // namespace
}  // namespace fixpoint
