#include <gtest/gtest.h>

#include "fixpoint/onnx_import.h"
#include "fixpoint/passes.h"
#include "fixpoint/runtime.h"
#include "test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

// x:[2,3,4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) -> Relu -> y:[2,12]
Graph shape_chain() {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {2, 3, 4}));
  g.initializers["zero"] = Tensor::from_i64({0}, {});
  g.initializers["axes0"] = Tensor::from_i64({0}, {1});
  g.initializers["minus1"] = Tensor::from_i64({-1}, {1});
  g.nodes.push_back(make_node("Shape", {"x"}, {"s"}, "shape"));
  g.nodes.push_back(make_node("Gather", {"s", "zero"}, {"n"}, "gather", {{"axis", test::int_attr(0)}}));
  g.nodes.push_back(make_node("Unsqueeze", {"n", "axes0"}, {"n1"}, "unsqueeze"));
  g.nodes.push_back(make_node("Concat", {"n1", "minus1"}, {"target"}, "concat", {{"axis", test::int_attr(0)}}));
  g.nodes.push_back(make_node("Reshape", {"x", "target"}, {"r"}, "reshape"));
  g.nodes.push_back(make_node("Relu", {"r"}, {"y"}, "relu"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

TEST(ConstantFolding, ShapeArithmeticCollapsesToOneConstant) {
  Graph g = shape_chain();
  Tensor x = test::random_tensor({2, 3, 4}, 1);
  Tensor before = Executor(g).run({{"x", x}}).at("y");

  PassManager pm = PassManager::standard();
  PassLog log = pm.run(g);
  ASSERT_EQ(g.nodes.size(), 2u) << g.dump();
  EXPECT_EQ(g.nodes[0].op_type, "Reshape");
  EXPECT_EQ(g.nodes[1].op_type, "Relu");
  ASSERT_TRUE(g.initializers.count("target"));
  EXPECT_EQ(g.initializers["target"].to_i64_vector(), (std::vector<int64_t>{2, -1}));
  EXPECT_FALSE(g.initializers.count("zero")) << "unused initializers must be dropped";
  EXPECT_FALSE(log.lines.empty());

  Tensor after = Executor(g).run({{"x", x}}).at("y");
  EXPECT_TRUE(bit_equal(before, after));
  EXPECT_EQ(after.shape(), (Shape{2, 12}));
}

TEST(ConstantFolding, ShapeOfDynamicTensorStays) {
  Graph g = shape_chain();
  g.inputs[0] = test::input_info("x", {-1, 3, 4});  // symbolic batch
  PassManager pm = PassManager::standard();
  pm.run(g);
  EXPECT_EQ(g.nodes.size(), 6u) << g.dump();
  Tensor x = test::random_tensor({5, 3, 4}, 2);
  EXPECT_EQ(Executor(g).run({{"x", x}}).at("y").shape(), (Shape{5, 12}));
}

TEST(ConstantFolding, ConstantNodesAndArithmeticFold) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {3}));
  Node c = make_node("Constant", {}, {"c"}, "const");
  Attribute v;
  v.kind = Attribute::Kind::Tensor;
  v.t = Tensor::from_f32({1, 2, 3}, {3});
  c.attrs["value"] = v;
  g.nodes.push_back(c);
  g.nodes.push_back(make_node("Mul", {"c", "c"}, {"c2"}, "square"));
  g.nodes.push_back(make_node("Add", {"x", "c2"}, {"y"}, "add"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  Tensor x = Tensor::from_f32({10, 20, 30}, {3});
  Tensor before = Executor(g).run({{"x", x}}).at("y");
  PassManager::standard().run(g);
  ASSERT_EQ(g.nodes.size(), 1u) << g.dump();
  EXPECT_EQ(g.initializers.at("c2").to_f32_vector(), (std::vector<float>{1, 4, 9}));
  EXPECT_TRUE(bit_equal(before, Executor(g).run({{"x", x}}).at("y")));
  EXPECT_EQ(before.to_f32_vector(), (std::vector<float>{11, 24, 39}));
}

TEST(ConstantFolding, ShapesDownstreamBecomeKnownAfterReinference) {
  Graph g = shape_chain();
  PassManager::standard().run(g);
  infer_shapes(g);
  const ValueInfo* r = g.info("r");
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(r->shape_known()) << r->shape_text();
  EXPECT_EQ(r->static_shape(), (Shape{2, 12}));
}

}  // namespace
}  // namespace fixpoint
