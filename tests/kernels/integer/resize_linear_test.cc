// Error bound of the integer linear Resize (34) kernel (src/kernels/reference/integer/resize_linear.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, ResizeLinear) {
  int bits = GetParam().bits;
  // (34): weights on 2^-20, one RQ: s_y (1/2 + 2^-19 |q_x| + 2^-31 |a| M) < 1/2 + 1/16 LSB.
  OpCase up = unary_case("Resize", -1, 3);
  up.graph.initializers["scales"] = Tensor(DType::Float32, {4});
  for (int i = 0; i < 4; ++i) up.graph.initializers["scales"].data<float>()[i] = i < 2 ? 1.0f : (i == 2 ? 2.0f : 1.5f);
  up.graph.nodes[0] = make_node("Resize", {"x", "", "scales"}, {"y"}, "op", {{"mode", test::string_attr("linear")}});
  check_case(up, bits, 5700 + bits, 1.0 / 16);
  OpCase down = unary_case("Resize", -2, 2);
  down.graph.initializers["sizes"] = Tensor::from_i64({2, 3, 3, 4}, {4});
  down.graph.nodes[0] = make_node("Resize", {"x", "", "", "sizes"}, {"y"}, "op",
                                  {{"mode", test::string_attr("linear")},
                                   {"coordinate_transformation_mode", test::string_attr("align_corners")}});
  check_case(down, bits, 5800 + bits, 1.0 / 16);
}

}  // namespace fixpoint::bounds
