// Error bound of the integer Table ops (20) kernel (src/kernels/reference/integer/lut.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, LookupTableOpsRoundExactly) {
  int bits = GetParam().bits;
  for (const auto& c : {unary_case("Sigmoid", -6, 6), unary_case("Tanh", -3, 3), unary_case("HardSwish", -4, 4),
                        unary_case("Exp", -3, 2), unary_case("Erf", -2, 2), unary_case("Softplus", -5, 5),
                        unary_case("LeakyRelu", -2, 2), unary_case("Sqrt", 0.01f, 9), unary_case("HardSigmoid", -4, 4)})
    check_case(c, bits, 1000 + bits);
}

TEST_P(OpErrorBounds, TableAbsorbsFollowingScalarOps) {
  // (20) composed: 0.7 * HardSwish(x) + 0.24 (PP-LCNet's learnable affine), then 1 / (.) - 0.5:
  // one table, one rounding, so the bound stays 1/2 LSB of the last output.
  OpCase c = unary_case("HardSwish", -4, 4);
  c.graph.initializers["k1"] = Tensor::from_f32({0.7f}, {1});
  c.graph.initializers["k2"] = Tensor::from_f32({0.24f}, {1});
  c.graph.initializers["k3"] = Tensor::from_f32({0.5f}, {1});
  c.graph.nodes[0].outputs[0] = "h";
  c.graph.nodes.push_back(make_node("Mul", {"k1", "h"}, {"m"}, "mul"));
  c.graph.nodes.push_back(make_node("Add", {"m", "k2"}, {"y"}, "add"));
  check_case(c, GetParam().bits, 1900 + GetParam().bits);
  c.graph.nodes[2].outputs[0] = "a";
  c.graph.nodes.push_back(make_node("Sub", {"k3", "a"}, {"y"}, "sub"));  // constant first: 0.5 - a
  check_case(c, GetParam().bits, 1950 + GetParam().bits);
}

TEST_P(OpErrorBounds, Gelu) {
  int bits = GetParam().bits;
  check_case(unary_case("Gelu", -4, 4), bits, 7200 + bits);
}

}  // namespace fixpoint::bounds
