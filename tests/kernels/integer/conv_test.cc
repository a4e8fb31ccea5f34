// Error bound of the integer Conv (14)-(15) kernel (src/kernels/reference/integer/conv.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, Conv) {
  int bits = GetParam().bits;
  OpCase conv{"Conv", {}, {{"x", {2, 4, 9, 9}}}, {{"x", {-1, 1}}}};
  conv.graph.opsets[""] = 13;
  conv.graph.inputs.push_back(test::input_info("x", {-1, 4, 9, 9}));
  conv.graph.initializers["w"] = test::random_tensor({6, 2, 3, 3}, 77);
  conv.graph.initializers["b"] = test::random_tensor({6}, 78);
  conv.graph.nodes.push_back(make_node("Conv", {"x", "w", "b"}, {"y"}, "conv",
                                       {{"group", test::int_attr(2)}, {"pads", test::ints_attr({1, 1, 1, 1})},
                                        {"strides", test::ints_attr({2, 1})}}));
  conv.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  check_case(conv, bits, 2000 + bits);
}

}  // namespace fixpoint::bounds
