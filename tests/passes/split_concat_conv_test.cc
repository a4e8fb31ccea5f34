#include "pass_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

// Concat(a, Relu(b), d) -> Conv(stride 2, pads 1, bias) -> Relu. Shapes of the Concat's inputs
// are known (graph inputs, or value_info as shape inference leaves it).
Graph concat_conv_graph() {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("a", {2, 3, 6, 6}));
  g.inputs.push_back(test::input_info("b", {2, 5, 6, 6}));
  g.inputs.push_back(test::input_info("d", {2, 2, 6, 6}));
  g.value_info["rb"] = test::input_info("rb", {2, 5, 6, 6});
  g.initializers["w"] = test::random_tensor({4, 10, 3, 3}, 1);
  g.initializers["bias"] = test::random_tensor({4}, 2);
  g.nodes.push_back(make_node("Relu", {"b"}, {"rb"}, "relu_b"));
  g.nodes.push_back(make_node("Concat", {"a", "rb", "d"}, {"cat"}, "concat", {{"axis", test::int_attr(1)}}));
  g.nodes.push_back(make_node("Conv", {"cat", "w", "bias"}, {"c"}, "conv",
                              {{"pads", test::ints_attr({1, 1, 1, 1})}, {"strides", test::ints_attr({2, 2})}}));
  g.nodes.push_back(make_node("Relu", {"c"}, {"y"}, "relu"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

std::map<std::string, Tensor> inputs() {
  return {{"a", test::random_tensor({2, 3, 6, 6}, 3)}, {"b", test::random_tensor({2, 5, 6, 6}, 4)},
          {"d", test::random_tensor({2, 2, 6, 6}, 5, -4, 4)}};
}

TEST(SplitConcatConv, OneConvPerConcatInputAndTheirSum) {
  PassLog log;
  Graph g = test::rewrite_and_check(concat_conv_graph(), make_split_concat_conv(), inputs(), 5, &log);
  EXPECT_EQ(test::count_op(g, "Concat"), 0);
  ASSERT_EQ(test::count_op(g, "Conv"), 3);
  EXPECT_EQ(test::count_op(g, "Add"), 2);
  std::vector<const Node*> convs;
  for (const auto& n : g.nodes)
    if (n.op_type == "Conv") convs.push_back(&n);
  // Each reads one Concat input with that input's slice of the weights; the bias once.
  EXPECT_EQ(convs[0]->inputs, (std::vector<std::string>{"a", "conv/part0/weight", "bias"}));
  EXPECT_EQ(convs[1]->inputs, (std::vector<std::string>{"rb", "conv/part1/weight"}));
  EXPECT_EQ(convs[2]->inputs, (std::vector<std::string>{"d", "conv/part2/weight"}));
  EXPECT_EQ(g.initializers.at("conv/part1/weight").shape(), (Shape{4, 5, 3, 3}));
  EXPECT_EQ(convs[2]->attr_ints("strides"), (std::vector<int64_t>{2, 2}));
  // The last Add writes the Conv's output, which the Relu still reads.
  const Node& last_add = *std::find_if(g.nodes.rbegin(), g.nodes.rend(), [](const Node& n) { return n.op_type == "Add"; });
  EXPECT_EQ(last_add.outputs[0], "c");
  ASSERT_EQ(log.entries.size(), 1u);
  EXPECT_EQ(log.entries[0].nodes, (std::vector<std::string>{"conv", "concat"}));
}

TEST(SplitConcatConv, LeavesSharedConcatsGroupedConvsAndOtherAxes) {
  Graph shared = concat_conv_graph();
  shared.outputs.push_back(ValueInfo{"cat", DType::Float32, std::nullopt});  // read by the user too
  test::rewrite_and_check(shared, make_split_concat_conv(), inputs(), 0);
  Graph grouped = concat_conv_graph();
  grouped.initializers["w"] = test::random_tensor({4, 5, 3, 3}, 1);
  grouped.nodes[2].attrs["group"] = test::int_attr(2);
  test::rewrite_and_check(grouped, make_split_concat_conv(), inputs(), 0);
  Graph unknown = concat_conv_graph();
  unknown.value_info.clear();  // the Relu output's channel count is not known
  test::rewrite_and_check(unknown, make_split_concat_conv(), inputs(), 0);
}

}  // namespace
}  // namespace fixpoint
