// Error bound of the integer Gemm/MatMul with constant weights (14)-(15) kernel (src/kernels/reference/integer/matmul.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, MatMulWithConstantWeights) {
  int bits = GetParam().bits;
  OpCase mm{"MatMul", {}, {{"x", {3, 5, 16}}}, {{"x", {-2, 2}}}};
  mm.graph.opsets[""] = 13;
  mm.graph.inputs.push_back(test::input_info("x", {3, 5, 16}));
  mm.graph.initializers["w"] = test::random_tensor({16, 8}, 79);
  mm.graph.nodes.push_back(make_node("MatMul", {"x", "w"}, {"y"}, "mm"));
  mm.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  check_case(mm, bits, 3000 + bits);
}

}  // namespace fixpoint::bounds
