// Error bound of the integer Concat (19) kernel (src/kernels/reference/integer/concat.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, ConcatWithDifferentScales) {
  int bits = GetParam().bits;
  check_case(binary_case("Concat", {2, 3, 4, 5}, {2, 2, 4, 5}, 1.0f, 9.0f), bits, 4300 + bits);
}

}  // namespace fixpoint::bounds
