// Error bound of the integer ReduceSum/ReduceMean (31); ReduceMax/Min as data movement kernel (src/kernels/reference/integer/reduce.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, ReduceMeanAndSum) {
  int bits = GetParam().bits;
  // (31): exact integer sum, one rounding of an exact ratio: s_y (1/2 + 2^-31 |a M / count|),
  // below s_y (1/2 + 2^-15) for 16-bit codes.
  check_case(unary_case("ReduceMean", -1, 3, {{"axes", test::ints_attr({2, 3})}}), bits, 5200 + bits, 1.0 / 1024);
  check_case(unary_case("ReduceMean", -2, 2, {{"axes", test::ints_attr({1})}, {"keepdims", test::int_attr(0)}}), bits,
             5300 + bits, 1.0 / 1024);
  OpCase noop = unary_case("ReduceSum", -1, 1, {{"noop_with_empty_axes", test::int_attr(1)}});  // the input, requantized
  check_case(noop, bits, 5650 + bits, 1.0 / 1024);
  OpCase sum = unary_case("ReduceSum", -1, 1);  // opset 11: axes as an attribute
  sum.graph.opsets[""] = 11;
  sum.graph.nodes[0] = make_node("ReduceSum", {"x"}, {"y"}, "op", {{"axes", test::ints_attr({3})}}, 11);
  check_case(sum, bits, 5400 + bits, 1.0 / 16);
  OpCase sum13 = unary_case("ReduceSum", -1, 1);  // opset 13: axes as a constant input
  sum13.graph.initializers["axes"] = Tensor::from_i64({1, 2}, {2});
  sum13.graph.nodes[0] = make_node("ReduceSum", {"x", "axes"}, {"y"}, "op", {{"keepdims", test::int_attr(0)}});
  check_case(sum13, bits, 5500 + bits, 1.0 / 16);
}

TEST_P(OpErrorBounds, ReduceMaxMinMoveCodes) {
  int bits = GetParam().bits;
  // ReduceMax/Min move codes (the map (1) is monotonic): exact.
  check_case(unary_case("ReduceMax", -3, 3, {{"axes", test::ints_attr({1, 3})}}), bits, 7300 + bits);
  check_case(unary_case("ReduceMin", -3, 3, {{"axes", test::ints_attr({-1})}, {"keepdims", test::int_attr(0)}}), bits, 7310 + bits);
}

}  // namespace fixpoint::bounds
