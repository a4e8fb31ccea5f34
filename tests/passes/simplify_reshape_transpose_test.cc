#include "pass_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

TEST(SimplifyReshapeTranspose, ReshapeChainCollapses) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 3, 4}));
  g.initializers["s1"] = Tensor::from_i64({6, 4}, {2});
  g.initializers["s2"] = Tensor::from_i64({2, -1}, {2});
  g.initializers["ax"] = Tensor::from_i64({0}, {1});
  g.nodes.push_back(make_node("Reshape", {"x", "s1"}, {"a"}, "r1"));
  g.nodes.push_back(make_node("Unsqueeze", {"a", "ax"}, {"b"}, "u"));
  g.nodes.push_back(make_node("Reshape", {"b", "s2"}, {"y"}, "r2"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  g = test::rewrite_and_check(g, make_simplify_reshape_transpose(), {{"x", test::random_tensor({2, 3, 4}, 1)}}, 2);
  ASSERT_EQ(g.nodes.size(), 1u) << g.dump();
  EXPECT_EQ(g.nodes[0].inputs[0], "x");
}

TEST(SimplifyReshapeTranspose, TransposePairsComposeAndIdentityVanishes) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 3, 4, 5}));
  g.nodes.push_back(make_node("Transpose", {"x"}, {"a"}, "t1", {{"perm", test::ints_attr({0, 2, 3, 1})}}));
  g.nodes.push_back(make_node("Transpose", {"a"}, {"b"}, "t2", {{"perm", test::ints_attr({0, 3, 1, 2})}}));  // undoes t1
  g.nodes.push_back(make_node("Neg", {"b"}, {"c"}, "neg"));
  g.nodes.push_back(make_node("Transpose", {"c"}, {"d"}, "t3", {{"perm", test::ints_attr({1, 0, 2, 3})}}));
  g.nodes.push_back(make_node("Transpose", {"d"}, {"y"}, "t4", {{"perm", test::ints_attr({0, 1, 3, 2})}}));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  g = test::rewrite_and_check(g, make_simplify_reshape_transpose(), {{"x", test::random_tensor({2, 3, 4, 5}, 2)}}, 3);
  ASSERT_EQ(g.nodes.size(), 2u) << g.dump();
  EXPECT_EQ(g.nodes[0].op_type, "Neg");
  EXPECT_EQ(g.nodes[0].inputs[0], "x");
  EXPECT_EQ(g.nodes[1].attr_ints("perm"), (std::vector<int64_t>{1, 0, 3, 2}));
}

TEST(SimplifyReshapeTranspose, ZeroInShapeOrSharedIntermediateStays) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 3, 4}));
  g.initializers["s1"] = Tensor::from_i64({6, 4}, {2});
  g.initializers["s2"] = Tensor::from_i64({0, -1}, {2});  // 0 copies a dim of r1's output
  g.nodes.push_back(make_node("Reshape", {"x", "s1"}, {"a"}, "r1"));
  g.nodes.push_back(make_node("Reshape", {"a", "s2"}, {"y"}, "r2"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  test::rewrite_and_check(g, make_simplify_reshape_transpose(), {{"x", test::random_tensor({2, 3, 4}, 3)}}, 0);
}

}  // namespace
}  // namespace fixpoint
