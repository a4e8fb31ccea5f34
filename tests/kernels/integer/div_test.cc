// Error bound of the integer Div (32) kernel (src/kernels/reference/integer/div.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, DivOfTwoActivations) {
  int bits = GetParam().bits;
  // (32): the exact ratio rounded once; M's 31-bit multiplier adds |q_y| 2^-31 LSB.
  OpCase d = binary_case("Div", {2, 3, 4, 5}, {1, 3, 1, 5}, 2.0f, 1.0f);
  d.input_ranges["b"] = {0.25f, 4.0f};
  check_case(d, bits, 4400 + bits, 1.0 / 16);
  OpCase neg = binary_case("Div", {2, 3, 4, 5}, {2, 3, 4, 5}, 1.0f, 1.0f);
  neg.input_ranges["b"] = {-3.0f, -0.5f};
  check_case(neg, bits, 4500 + bits, 1.0 / 16);
}

}  // namespace fixpoint::bounds
