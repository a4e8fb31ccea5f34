#include "pass_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

// x -> Neg -> x1 -> GELU(x1) in one of the exported orders -> y
Graph gelu_graph(int order) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 8}));
  g.initializers["sqrt2"] = Tensor::scalar_f32(1.4142135381698608f);
  g.initializers["inv_sqrt2"] = Tensor::scalar_f32(0.7071067690849304f);
  g.initializers["one"] = Tensor::scalar_f32(1);
  g.initializers["half"] = Tensor::scalar_f32(0.5f);
  g.nodes.push_back(make_node("Neg", {"x"}, {"x1"}, "neg"));
  if (order == 0) g.nodes.push_back(make_node("Div", {"x1", "sqrt2"}, {"u"}, "div"));
  else g.nodes.push_back(make_node("Mul", {"inv_sqrt2", "x1"}, {"u"}, "div"));
  g.nodes.push_back(make_node("Erf", {"u"}, {"e"}, "erf"));
  g.nodes.push_back(make_node("Add", {"e", "one"}, {"b"}, "add"));
  if (order == 0) {  // (x * b) * 0.5  (PyTorch)
    g.nodes.push_back(make_node("Mul", {"x1", "b"}, {"m"}, "mul"));
    g.nodes.push_back(make_node("Mul", {"m", "half"}, {"y"}, "half"));
  } else if (order == 1) {  // x * (b * 0.5)
    g.nodes.push_back(make_node("Mul", {"b", "half"}, {"m"}, "mul"));
    g.nodes.push_back(make_node("Mul", {"x1", "m"}, {"y"}, "half"));
  } else {  // (x * 0.5) * b
    g.nodes.push_back(make_node("Mul", {"x1", "half"}, {"m"}, "half"));
    g.nodes.push_back(make_node("Mul", {"m", "b"}, {"y"}, "mul"));
  }
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

TEST(FuseGelu, AllThreeExportedOrders) {
  Tensor x = test::random_tensor({2, 8}, 5, -4, 4);
  for (int order = 0; order < 3; ++order) {
    PassLog log;
    Graph g = test::rewrite_and_check(gelu_graph(order), make_fuse_gelu(), {{"x", x}}, 1, &log);
    ASSERT_EQ(g.nodes.size(), 2u) << "order " << order << "\n" << g.dump();
    EXPECT_EQ(g.nodes[1].op_type, "Gelu");
    EXPECT_EQ(g.nodes[1].inputs, std::vector<std::string>{"x1"});
    EXPECT_EQ(g.nodes[1].outputs[0], "y");
    EXPECT_EQ(log.entries.at(0).nodes.size(), 5u);
  }
}

TEST(FuseGelu, SharedIntermediateBlocksTheFusion) {
  Tensor x = test::random_tensor({2, 8}, 6, -4, 4);
  Graph g = gelu_graph(0);
  g.nodes.push_back(make_node("Neg", {"e"}, {"z"}, "reads_erf"));
  g.outputs.push_back(ValueInfo{"z", DType::Float32, std::nullopt});
  test::rewrite_and_check(g, make_fuse_gelu(), {{"x", x}}, 0);
}

TEST(FuseGelu, WrongConstantIsNotGelu) {
  Tensor x = test::random_tensor({2, 8}, 7, -4, 4);
  Graph g = gelu_graph(0);
  g.initializers["half"] = Tensor::scalar_f32(0.25f);
  test::rewrite_and_check(g, make_fuse_gelu(), {{"x", x}}, 0);
}

}  // namespace
}  // namespace fixpoint
