// Error bound of the integer Add/Sub (16)-(17) kernel (src/kernels/reference/integer/addsub.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, AddSubWithDifferentScales) {
  int bits = GetParam().bits;
  // Add/Sub bound: s_y * (1/2 + (|q_a| + |q_b|) 2^-(L+1)), L = 20 or 36: below 0.5 + 2^-4 LSB.
  check_case(binary_case("Add", {2, 3, 4, 5}, {1, 3, 1, 5}, 1.0f, 7.0f), bits, 4000 + bits, 1.0 / 16);
  check_case(binary_case("Sub", {2, 3, 4, 5}, {5}, 3.0f, 0.5f), bits, 4100 + bits, 1.0 / 16);
}

}  // namespace fixpoint::bounds
