// Error bound of the integer Mul (18) kernel (src/kernels/reference/integer/mul.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, MulWithDifferentScales) {
  int bits = GetParam().bits;
  check_case(binary_case("Mul", {2, 3, 4, 5}, {2, 3, 4, 5}, 2.0f, 5.0f), bits, 4200 + bits);
}

}  // namespace fixpoint::bounds
