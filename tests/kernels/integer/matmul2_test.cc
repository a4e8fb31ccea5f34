// Error bound of the integer MatMul of two activations (21) kernel (src/kernels/reference/integer/matmul2.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, MatMulOfTwoActivations) {
  int bits = GetParam().bits;
  // (21): exact integer products, one rounding: 1/2 LSB (+ 2^-31 relative multiplier error).
  OpCase mm{"MatMul2", {}, {{"a", {2, 1, 5, 16}}, {"b", {3, 16, 7}}}, {{"a", {-2, 2}}, {"b", {-1, 3}}}};
  mm.graph.opsets[""] = 13;
  mm.graph.inputs.push_back(test::input_info("a", {2, 1, 5, 16}));
  mm.graph.inputs.push_back(test::input_info("b", {3, 16, 7}));
  mm.graph.nodes.push_back(make_node("MatMul", {"a", "b"}, {"y"}, "mm"));
  mm.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  check_case(mm, bits, 6100 + bits);
}

}  // namespace fixpoint::bounds
