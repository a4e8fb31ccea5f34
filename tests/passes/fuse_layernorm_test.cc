#include <gtest/gtest.h>

#include "fixpoint/passes.h"
#include "fixpoint/runtime.h"
#include "test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

// PaddleOCR's decomposed LayerNorm, opset 9 style (axes as attributes).
Graph decomposed(bool extra_reader) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 40, 120}));
  g.initializers["two"] = Tensor::scalar_f32(2);
  g.initializers["eps"] = Tensor::scalar_f32(1e-6f);
  g.initializers["gamma"] = test::random_tensor({120}, 1, 0.5f, 1.5f);
  g.initializers["beta"] = test::random_tensor({120}, 2);
  std::map<std::string, Attribute> last = {{"axes", test::ints_attr({-1})}};
  g.nodes.push_back(make_node("ReduceMean", {"x"}, {"m"}, "mean", last, 9));
  g.nodes.push_back(make_node("Sub", {"x", "m"}, {"d"}, "sub", {}, 9));
  g.nodes.push_back(make_node("Pow", {"d", "two"}, {"p"}, "pow", {}, 9));
  g.nodes.push_back(make_node("ReduceMean", {"p"}, {"v"}, "var", last, 9));
  g.nodes.push_back(make_node("Add", {"v", "eps"}, {"e"}, "add_eps", {}, 9));
  g.nodes.push_back(make_node("Sqrt", {"e"}, {"s"}, "sqrt", {}, 9));
  g.nodes.push_back(make_node("Div", {"d", "s"}, {"n"}, "div", {}, 9));
  g.nodes.push_back(make_node("Mul", {"n", "gamma"}, {"o"}, "mul", {}, 9));
  g.nodes.push_back(make_node("Add", {"o", "beta"}, {"y"}, "add_beta", {}, 9));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  if (extra_reader) {
    g.nodes.push_back(make_node("Relu", {"s"}, {"y2"}, "reads_sqrt", {}, 9));
    g.outputs.push_back(ValueInfo{"y2", DType::Float32, std::nullopt});
  }
  return g;
}

TEST(FuseLayerNorm, NineNodesBecomeOneWithTheSameNumbers) {
  Graph g = decomposed(false);
  Tensor x = test::random_tensor({2, 40, 120}, 3, -4.0f, 4.0f);
  Tensor before = Executor(g).run({{"x", x}}).at("y");
  PassLog log;
  EXPECT_EQ(make_fuse_layernorm()->run(g, log), 1);
  g.validate();
  ASSERT_EQ(g.nodes.size(), 1u) << g.dump();
  EXPECT_EQ(g.nodes[0].op_type, "LayerNormalization");
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "gamma", "beta"}));
  EXPECT_FLOAT_EQ(g.nodes[0].attr_float("epsilon", 0), 1e-6f);
  Tensor after = Executor(g).run({{"x", x}}).at("y");
  EXPECT_LE(test::max_rel_err(before, after), 1e-5);
}

TEST(FuseLayerNorm, IntermediateReadElsewhereBlocksFusion) {
  Graph g = decomposed(true);
  PassLog log;
  EXPECT_EQ(make_fuse_layernorm()->run(g, log), 0);
}

TEST(FuseLayerNorm, StillFusesAfterPowBecameMulInTheCompilePipeline) {
  Graph g = decomposed(false);
  Tensor x = test::random_tensor({2, 40, 120}, 4, -4.0f, 4.0f);
  Tensor before = Executor(g).run({{"x", x}}).at("y");
  PassLog log = PassManager::compile_time().run(g);
  ASSERT_EQ(g.nodes.size(), 1u) << g.dump();
  EXPECT_EQ(g.nodes[0].op_type, "LayerNormalization");
  EXPECT_LE(test::max_rel_err(before, Executor(g).run({{"x", x}}).at("y")), 1e-5);
  bool saw_pow = false;
  for (const auto& e : log.entries) saw_pow = saw_pow || e.pass == "rewrite_pow";
  EXPECT_TRUE(saw_pow);
}

}  // namespace
}  // namespace fixpoint
