#include <gtest/gtest.h>

#include "fixpoint/passes.h"
#include "fixpoint/runtime.h"
#include "test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

TEST(IdentityElimination, RewiresConsumersAndKeepsNumbers) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {4}));
  g.nodes.push_back(make_node("Neg", {"x"}, {"a"}, "neg"));
  g.nodes.push_back(make_node("Identity", {"a"}, {"b"}, "id"));
  g.nodes.push_back(make_node("Dropout", {"b"}, {"c"}, "drop"));
  g.nodes.push_back(make_node("Relu", {"c"}, {"y"}, "relu"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  Tensor x = Tensor::from_f32({-1, 2, -3, 4}, {4});
  Tensor before = Executor(g).run({{"x", x}}).at("y");
  PassLog log;
  EXPECT_EQ(make_identity_elimination()->run(g, log), 2);
  g.validate();
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[1].inputs[0], "a");
  EXPECT_TRUE(bit_equal(before, Executor(g).run({{"x", x}}).at("y")));
}

// ONNX Dropout: with ratio 0 the output is the data also in training mode (torch exports
// Swin-T's attention dropout that way: ratio 0, training_mode true); with ratio 0.5 it is random.
TEST(IdentityElimination, DropoutInTrainingModeGoesOnlyWithRatioZero) {
  for (float ratio : {0.0f, 0.5f}) {
    Graph g;
    g.inputs.push_back(test::input_info("x", {4}));
    g.initializers["ratio"] = Tensor::from_f32({ratio}, {});
    Tensor training(DType::Bool, {});
    training.data<uint8_t>()[0] = 1;
    g.initializers["training"] = training;
    g.nodes.push_back(make_node("Neg", {"x"}, {"a"}, "neg"));
    Node d = make_node("Dropout", {"a", "ratio", "training"}, {"b", "mask"}, "drop");
    d.opset = 13;
    g.nodes.push_back(d);
    g.nodes.push_back(make_node("Relu", {"b"}, {"y"}, "relu"));
    g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
    PassLog log;
    EXPECT_EQ(make_identity_elimination()->run(g, log), ratio == 0 ? 1 : 0) << "ratio " << ratio;
    EXPECT_EQ(g.nodes.size(), ratio == 0 ? 2u : 3u);
  }
}

TEST(IdentityElimination, GraphOutputNameSurvives) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2}));
  g.nodes.push_back(make_node("Neg", {"x"}, {"a"}, "neg"));
  g.nodes.push_back(make_node("Identity", {"a"}, {"out"}, "id"));
  g.outputs.push_back(ValueInfo{"out", DType::Float32, std::nullopt});
  PassLog log;
  EXPECT_EQ(make_identity_elimination()->run(g, log), 1);
  g.validate();
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].outputs[0], "out");
  EXPECT_EQ(Executor(g).run({{"x", Tensor::from_f32({1, -2}, {2})}}).at("out").to_f32_vector(),
            (std::vector<float>{-1, 2}));
}

TEST(IdentityElimination, IdentityBetweenInputAndOutputStays) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2}));
  g.nodes.push_back(make_node("Identity", {"x"}, {"out"}, "id"));
  g.outputs.push_back(ValueInfo{"out", DType::Float32, std::nullopt});
  PassLog log;
  EXPECT_EQ(make_identity_elimination()->run(g, log), 0);
  EXPECT_EQ(g.nodes.size(), 1u);
}

TEST(DeadNodeElimination, RemovesUnusedChainsAndInitializers) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2}));
  g.initializers["w"] = Tensor::from_f32({1, 1}, {2});
  g.nodes.push_back(make_node("Neg", {"x"}, {"y"}, "used"));
  g.nodes.push_back(make_node("Add", {"x", "w"}, {"d1"}, "dead1"));
  g.nodes.push_back(make_node("Exp", {"d1"}, {"d2"}, "dead2"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  PassLog log;
  EXPECT_EQ(make_dead_node_elimination()->run(g, log), 2);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "used");
  EXPECT_TRUE(g.initializers.empty());
  EXPECT_EQ(log.lines.size(), 2u);
}

}  // namespace
}  // namespace fixpoint
