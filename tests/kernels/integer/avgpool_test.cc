// Error bound of the integer AveragePool/GlobalAveragePool (19) kernel (src/kernels/reference/integer/avgpool.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, AveragePools) {
  int bits = GetParam().bits;
  // (19): one rounding of an exact ratio, s_y (1/2 + 2^-31 |a M / count|): the 2^-15 LSB at most
  // is inside the harness's 1e-6 q_max slack, so the bound checked is 1/2 LSB. Windows at the
  // border count fewer cells.
  check_case(unary_case("GlobalAveragePool", -1, 3), bits, 5000 + bits);
  check_case(unary_case("AveragePool", -1, 1,
                        {{"kernel_shape", test::ints_attr({3, 3})}, {"pads", test::ints_attr({1, 1, 1, 1})},
                         {"strides", test::ints_attr({2, 2})}}),
             bits, 5100 + bits);
  check_case(unary_case("AveragePool", -1, 1,
                        {{"kernel_shape", test::ints_attr({2, 3})}, {"pads", test::ints_attr({1, 0, 1, 2})},
                         {"count_include_pad", test::int_attr(1)}}),
             bits, 5150 + bits);
}

}  // namespace fixpoint::bounds
