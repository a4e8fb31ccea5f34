// Sign analysis (src/quantize/sign_analysis.cc): never-negative tensors get unsigned codes, also
// through data movement; a table composed with an affine (which may go negative) does not.
#include <gtest/gtest.h>

#include "compile_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

TEST(SignAnalysis, NonNegativeFunctionsAndTheirMovesAreUnsigned) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 2, 3, 4}));
  g.initializers["k"] = Tensor::from_f32({-0.5f}, {1});
  g.nodes.push_back(make_node("Sigmoid", {"x"}, {"s"}, "sigmoid"));
  g.nodes.push_back(make_node("Transpose", {"s"}, {"t"}, "transpose", {{"perm", test::ints_attr({0, 3, 1, 2})}}));
  g.nodes.push_back(make_node("Tanh", {"x"}, {"h"}, "tanh"));
  g.nodes.push_back(make_node("Exp", {"x"}, {"e"}, "exp"));
  g.nodes.push_back(make_node("Add", {"e", "k"}, {"ek"}, "exp_minus_half"));  // absorbed into Exp's table
  g.outputs = {ValueInfo{"t", DType::Float32, std::nullopt}, ValueInfo{"h", DType::Float32, std::nullopt},
               ValueInfo{"ek", DType::Float32, std::nullopt}};
  std::vector<std::map<std::string, Tensor>> calib = {{{"x", test::random_tensor({1, 2, 3, 4}, 3, -3, 3)}}};
  Program p = test::compile_graph(g, CompileOptions{}, calib).program;
  EXPECT_EQ(p.tensors.at("s").type, DType::UInt8);
  EXPECT_EQ(p.tensors.at("t").type, DType::UInt8);  // moves keep the sign
  EXPECT_EQ(p.tensors.at("h").type, DType::Int8);
  EXPECT_TRUE(p.tensors.at("ek").zero_point > 0 || p.tensors.at("ek").type == DType::Int8)
      << "exp(x) - 0.5 reaches below 0: it needs negative codes";
}

}  // namespace
}  // namespace fixpoint
