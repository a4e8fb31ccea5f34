// Error bound of the integer PRelu (33) kernel (src/kernels/reference/integer/prelu.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, PReluWithPerChannelSlopes) {
  int bits = GetParam().bits;
  // (33): one RQ either side: s_y (1/2 + 2^-31 |a| M).
  OpCase c = unary_case("PRelu", -2, 2);
  Tensor slope(DType::Float32, {3, 1, 1});
  slope.data<float>()[0] = 0.25f;
  slope.data<float>()[1] = -0.6f;  // negative slopes exist in trained PRelu nets
  slope.data<float>()[2] = 0.0f;   // a Relu channel
  c.graph.initializers["slope"] = slope;
  c.graph.nodes[0] = make_node("PRelu", {"x", "slope"}, {"y"}, "op");
  check_case(c, bits, 5600 + bits, 1.0 / 16);
}

}  // namespace fixpoint::bounds
