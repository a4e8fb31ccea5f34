#include <gtest/gtest.h>

#include "fixpoint/ir.h"
#include "test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

Graph chain() {
  Graph g;
  g.inputs.push_back(test::input_info("x", {1, 4}));
  g.outputs.push_back(ValueInfo{"z", DType::Float32, std::nullopt});
  // Deliberately out of order: z = Relu(y), y = Neg(x)
  g.nodes.push_back(make_node("Relu", {"y"}, {"z"}, "relu"));
  g.nodes.push_back(make_node("Neg", {"x"}, {"y"}, "neg"));
  return g;
}

TEST(Graph, TopologicalSortReordersAndValidates) {
  Graph g = chain();
  EXPECT_THROW(g.validate(), Error);
  g.topological_sort();
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].name, "neg");
  EXPECT_EQ(g.nodes[1].name, "relu");
  EXPECT_NO_THROW(g.validate());
}

TEST(Graph, TopologicalSortKeepsFileOrderWhenAlreadySorted) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2}));
  g.nodes.push_back(make_node("Neg", {"x"}, {"a"}, "n1"));
  g.nodes.push_back(make_node("Abs", {"x"}, {"b"}, "n2"));
  g.nodes.push_back(make_node("Add", {"a", "b"}, {"c"}, "n3"));
  g.outputs.push_back(ValueInfo{"c", DType::Float32, std::nullopt});
  g.topological_sort();
  EXPECT_EQ(g.nodes[0].name, "n1");
  EXPECT_EQ(g.nodes[1].name, "n2");
  EXPECT_EQ(g.nodes[2].name, "n3");
}

TEST(Graph, CycleIsReportedWithANodeName) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2}));
  g.nodes.push_back(make_node("Add", {"x", "b"}, {"a"}, "first"));
  g.nodes.push_back(make_node("Relu", {"a"}, {"b"}, "second"));
  g.outputs.push_back(ValueInfo{"b", DType::Float32, std::nullopt});
  try {
    g.topological_sort();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("first"), std::string::npos) << e.what();
  }
}

TEST(Graph, UndefinedTensorAndDoubleProducerAreErrors) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2}));
  g.nodes.push_back(make_node("Add", {"x", "ghost"}, {"a"}, "adder"));
  EXPECT_THROW(g.topological_sort(), Error);
  Graph h;
  h.inputs.push_back(test::input_info("x", {2}));
  h.nodes.push_back(make_node("Neg", {"x"}, {"a"}, "n1"));
  h.nodes.push_back(make_node("Abs", {"x"}, {"a"}, "n2"));
  EXPECT_THROW(h.topological_sort(), Error);
}

TEST(Graph, DumpIsReadableAndStable) {
  Graph g = chain();
  g.topological_sort();
  g.initializers["w"] = Tensor::from_f32({1, 2}, {2});
  g.nodes[1].attrs["alpha"] = test::float_attr(0.5f);
  EXPECT_EQ(g.dump(),
            "input x: float32[1x4]\n"
            "initializer w: float32[2]\n"
            "node neg = Neg(x) -> (y)\n"
            "node relu = Relu(y) -> (z) alpha=0.5\n"
            "output z: float32[?]\n");
}

TEST(Graph, SymbolicDimsPrintByName) {
  ValueInfo v{"x", DType::Float32, std::vector<Dim>{Dim::sym("batch"), Dim::of(3), Dim::sym("")}};
  EXPECT_EQ(v.shape_text(), "batchx3x?");
  EXPECT_FALSE(v.shape_known());
  EXPECT_THROW(v.static_shape(), Error);
}

TEST(Graph, UseCountsIncludeGraphOutputs) {
  Graph g = chain();
  g.topological_sort();
  auto u = g.use_counts();
  EXPECT_EQ(u["x"], 1);
  EXPECT_EQ(u["y"], 1);
  EXPECT_EQ(u["z"], 1);
}

TEST(Tensor, HalfAndBfloatConversionsRoundToNearestEven) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);                   // overflow -> inf
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // tie -> even (0)
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie -> even
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  for (uint32_t h = 0; h < 0x7c00; h += 7) EXPECT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(h))), h);
}

}  // namespace
}  // namespace fixpoint
