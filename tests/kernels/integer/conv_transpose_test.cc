// Error bound of the integer ConvTranspose (22) kernel (src/kernels/reference/integer/conv_transpose.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, ConvTranspose) {
  int bits = GetParam().bits;
  OpCase ct{"ConvTranspose", {}, {{"x", {2, 4, 5, 6}}}, {{"x", {-1, 1}}}};
  ct.graph.opsets[""] = 13;
  ct.graph.inputs.push_back(test::input_info("x", {-1, 4, 5, 6}));
  ct.graph.initializers["w"] = test::random_tensor({4, 3, 3, 2}, 81);  // group 2: 6 output channels
  ct.graph.initializers["b"] = test::random_tensor({6}, 82);
  ct.graph.nodes.push_back(make_node("ConvTranspose", {"x", "w", "b"}, {"y"}, "deconv",
                                     {{"group", test::int_attr(2)}, {"strides", test::ints_attr({2, 2})},
                                      {"pads", test::ints_attr({1, 0, 0, 1})}, {"output_padding", test::ints_attr({1, 0})}}));
  ct.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  check_case(ct, bits, 6000 + bits);
}

}  // namespace fixpoint::bounds
