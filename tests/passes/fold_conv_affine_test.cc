#include "pass_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

Graph conv_graph(const std::string& op, Shape w, int64_t group, std::vector<int64_t> pads) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 4, 6, 6}));
  g.initializers["w"] = test::random_tensor(w, 11);
  int64_t M = op == "Conv" ? w[0] : w[1] * group;
  g.initializers["b"] = test::random_tensor({M}, 12);
  g.nodes.push_back(make_node(op, {"x", "w", "b"}, {"c"}, "conv",
                              {{"group", test::int_attr(group)}, {"pads", test::ints_attr(pads)}}));
  return g;
}

TEST(FoldConvAffine, MulThenAddAfterConv) {
  Graph g = conv_graph("Conv", {6, 4, 3, 3}, 1, {1, 1, 1, 1});
  g.initializers["s"] = test::random_tensor({1, 6, 1, 1}, 13, 0.5f, 2.0f);
  g.initializers["t"] = test::random_tensor({6, 1, 1}, 14);
  g.nodes.push_back(make_node("Mul", {"c", "s"}, {"m"}, "scale"));
  g.nodes.push_back(make_node("Add", {"t", "m"}, {"y"}, "shift"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  PassLog log;
  g = test::rewrite_and_check(g, make_fold_conv_affine(), {{"x", test::random_tensor({2, 4, 6, 6}, 1)}}, 2, &log);
  ASSERT_EQ(g.nodes.size(), 1u) << g.dump();
  EXPECT_EQ(g.nodes[0].outputs[0], "y");
  EXPECT_EQ(log.entries[0].nodes, (std::vector<std::string>{"scale", "conv"}));
}

TEST(FoldConvAffine, SubInBothOrdersAndScalarMul) {
  for (int order = 0; order < 2; ++order) {
    Graph g = conv_graph("Conv", {3, 4, 1, 1}, 1, {0, 0, 0, 0});
    g.initializers["t"] = test::random_tensor({1, 3, 1, 1}, 15);
    g.initializers["k"] = Tensor::scalar_f32(-0.75f);
    g.nodes.push_back(make_node("Sub", order ? std::vector<std::string>{"t", "c"} : std::vector<std::string>{"c", "t"}, {"s"}, "sub"));
    g.nodes.push_back(make_node("Mul", {"s", "k"}, {"y"}, "mul"));
    g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
    g = test::rewrite_and_check(g, make_fold_conv_affine(), {{"x", test::random_tensor({2, 4, 6, 6}, 2)}}, 2);
    EXPECT_EQ(g.nodes.size(), 1u);
  }
}

TEST(FoldConvAffine, GroupedConvTransposeOutputChannels) {
  Graph g = conv_graph("ConvTranspose", {4, 3, 2, 2}, 2, {0, 0, 0, 0});  // M = 6
  g.initializers["s"] = test::random_tensor({6, 1, 1}, 16, -2.0f, 2.0f);
  g.nodes.push_back(make_node("Mul", {"c", "s"}, {"y"}, "scale"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  g = test::rewrite_and_check(g, make_fold_conv_affine(), {{"x", test::random_tensor({2, 4, 6, 6}, 3)}}, 1);
  EXPECT_EQ(test::count_op(g, "Mul"), 0);
}

TEST(FoldConvAffine, InputSideMulWithPaddingAndAddWithout) {
  // Depthwise conv (group 4): the input channel of each weight is its group.
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 4, 6, 6}));
  g.initializers["s"] = test::random_tensor({4, 1, 1}, 17, 0.5f, 1.5f);
  g.initializers["t"] = test::random_tensor({1, 4, 1, 1}, 18);
  g.initializers["w1"] = test::random_tensor({4, 1, 3, 3}, 19);
  g.initializers["w2"] = test::random_tensor({8, 4, 1, 1}, 20);
  g.nodes.push_back(make_node("Mul", {"x", "s"}, {"a"}, "scale"));
  g.nodes.push_back(make_node("Conv", {"a", "w1"}, {"c1"}, "dw", {{"group", test::int_attr(4)}, {"pads", test::ints_attr({1, 1, 1, 1})}}));
  g.nodes.push_back(make_node("Add", {"c1", "t"}, {"d"}, "shift"));  // output side of dw comes first
  g.nodes.push_back(make_node("Relu", {"d"}, {"r"}, "relu"));
  g.nodes.push_back(make_node("Add", {"r", "t"}, {"e"}, "shift2"));
  g.nodes.push_back(make_node("Conv", {"e", "w2"}, {"y"}, "pw"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  g = test::rewrite_and_check(g, make_fold_conv_affine(), {{"x", test::random_tensor({2, 4, 6, 6}, 4)}}, 3);
  EXPECT_EQ(test::count_op(g, "Mul") + test::count_op(g, "Add"), 0) << g.dump();
  EXPECT_EQ(g.nodes.size(), 3u);
}

TEST(FoldConvAffine, InputSideAddWithPaddingOrNonChannelConstantStays) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 4, 6, 6}));
  g.initializers["t"] = test::random_tensor({4, 1, 1}, 21);
  g.initializers["row"] = test::random_tensor({6}, 22);  // varies along W, not per channel
  g.initializers["w"] = test::random_tensor({2, 4, 3, 3}, 23);
  g.nodes.push_back(make_node("Add", {"x", "t"}, {"a"}, "shift"));
  g.nodes.push_back(make_node("Conv", {"a", "w"}, {"c"}, "conv", {{"pads", test::ints_attr({1, 1, 1, 1})}}));
  g.nodes.push_back(make_node("Mul", {"c", "row"}, {"y"}, "rowscale"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  test::rewrite_and_check(g, make_fold_conv_affine(), {{"x", test::random_tensor({2, 4, 6, 6}, 5)}}, 0);
}

}  // namespace
}  // namespace fixpoint
