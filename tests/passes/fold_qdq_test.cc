#include "pass_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

// x -> Q/DQ (s 1/32, z 128) -> Relu -> Q/DQ (s 1/64, z 0) -> y, and an int8 per-channel weight
// DequantizeLinear feeding a Conv.
Graph qdq_graph(bool output_pair) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 2, 3, 3}));
  g.initializers["s1"] = Tensor::scalar_f32(1.0f / 32);
  g.initializers["s2"] = Tensor::scalar_f32(1.0f / 64);
  Tensor z1(DType::UInt8, {}), z2(DType::UInt8, {});
  z1.data<uint8_t>()[0] = 128;
  z2.data<uint8_t>()[0] = 0;
  g.initializers["z1"] = z1;
  g.initializers["z2"] = z2;
  Tensor wq(DType::Int8, {2, 2, 1, 1});
  for (int i = 0; i < 4; ++i) wq.data<int8_t>()[i] = static_cast<int8_t>(i * 40 - 60);
  g.initializers["wq"] = wq;
  g.initializers["ws"] = Tensor(DType::Float32, {2});
  g.initializers["ws"].data<float>()[0] = 0.01f;
  g.initializers["ws"].data<float>()[1] = 0.02f;
  g.nodes.push_back(make_node("QuantizeLinear", {"x", "s1", "z1"}, {"xq"}, "q1"));
  g.nodes.push_back(make_node("DequantizeLinear", {"xq", "s1", "z1"}, {"xd"}, "dq1"));
  g.nodes.push_back(make_node("DequantizeLinear", {"wq", "ws"}, {"w"}, "wdq", {{"axis", test::int_attr(0)}}));
  g.nodes.push_back(make_node("Conv", {"xd", "w"}, {"c"}, "conv"));
  g.nodes.push_back(make_node("Relu", {"c"}, {"r"}, "relu"));
  g.nodes.push_back(make_node("QuantizeLinear", {"r", "s2", "z2"}, {"rq"}, "q2"));
  g.nodes.push_back(make_node("DequantizeLinear", {"rq", "s2", "z2"}, {output_pair ? "y" : "rd"}, "dq2"));
  if (!output_pair) g.nodes.push_back(make_node("Neg", {"rd"}, {"y"}, "neg"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

TEST(FoldQdq, PairsFoldAndRecordTheirEncodings) {
  for (bool output_pair : {false, true}) {
    Graph g = qdq_graph(output_pair);
    auto weights = qdq_weights(g);
    ASSERT_EQ(weights.count("w"), 1u);
    EXPECT_EQ(weights.at("w").scales, (std::vector<double>{0.01f, 0.02f}));
    EXPECT_EQ(weights.at("w").axis, 0);
    EXPECT_EQ(weights.at("w").type, DType::Int8);
    PassLog log;
    auto acts = fold_qdq_pairs(g, log);
    EXPECT_EQ(log.entries.size(), 2u);
    EXPECT_EQ(log.entries[0].nodes, (std::vector<std::string>{"q1", "dq1"}));
    PassLog dce;
    make_dead_node_elimination()->run(g, dce);
    g.validate();
    EXPECT_EQ(test::count_op(g, "QuantizeLinear"), 0) << g.dump();
    EXPECT_EQ(test::count_op(g, "DequantizeLinear"), 1);  // the weight's, for constant folding
    ASSERT_EQ(acts.size(), 2u);
    EXPECT_EQ(acts.at("x").scale, 1.0 / 32);
    EXPECT_EQ(acts.at("x").zero_point, 128);
    EXPECT_EQ(acts.at("x").type, DType::UInt8);
    std::string r = output_pair ? "y" : "r";  // a graph output keeps its name: relu writes y
    ASSERT_EQ(acts.count(r), 1u);
    EXPECT_EQ(acts.at(r).scale, 1.0 / 64);
    // Numbers: the folded graph computes the model without its activation rounding.
    Tensor x = test::random_tensor({1, 2, 3, 3}, 7, -2, 2);
    auto got = Executor(g).run({{"x", x}}).at("y");
    Graph plain = qdq_graph(output_pair);
    plain.nodes.erase(plain.nodes.begin(), plain.nodes.begin() + 2);
    plain.nodes[1].inputs[0] = "x";  // conv reads x
    plain.nodes.erase(plain.nodes.begin() + 3, plain.nodes.begin() + 5);
    if (output_pair) plain.nodes[2].outputs[0] = "y";
    else plain.nodes[3].inputs[0] = "r";
    EXPECT_LE(test::max_rel_err(Executor(plain).run({{"x", x}}).at("y"), got), 1e-6);
  }
}

TEST(FoldQdq, MismatchedOrPerChannelActivationPairsStay) {
  Graph g = qdq_graph(false);
  g.nodes[1].inputs[1] = "s2";  // DequantizeLinear with another scale than its QuantizeLinear
  PassLog log;
  auto acts = fold_qdq_pairs(g, log);
  EXPECT_EQ(acts.count("x"), 0u);
  EXPECT_EQ(test::count_op(g, "DequantizeLinear"), 2);  // the pair on r still folded
}

}  // namespace
}  // namespace fixpoint
