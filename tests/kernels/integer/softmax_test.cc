// Error bound of the integer Softmax (23)-(25) kernel (src/kernels/reference/integer/softmax.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, Softmax) {
  int bits = GetParam().bits;
  // Softmax (25): s_y (1/2 + Q (N + 1) 2^-31); N = 7, Q <= 65535: below 0.5 + 2^-12 LSB.
  check_case(unary_case("Softmax", -6, 6, {{"axis", test::int_attr(1)}}), bits, 7000 + bits, 1.0 / 4096);
  check_case(unary_case("Softmax", -3, 3), bits, 7010 + bits, 1.0 / 4096);
}

}  // namespace fixpoint::bounds
