// Error bound of the integer LayerNormalization (26)-(30), InstanceNormalization (§5.19) kernel (src/kernels/reference/integer/normalize.cc) against float.
#include "op_bounds.h"

namespace fixpoint::bounds {

TEST_P(OpErrorBounds, LayerNormAndInstanceNorm) {
  int bits = GetParam().bits;
  // LayerNormalization (30): s_y (1/2 + |q_y| 2^-16): below 0.5 + 2^-1 LSB at 16 bits.
  OpCase ln{"LayerNormalization", {}, {{"x", {2, 6, 24}}}, {{"x", {-3, 5}}}};
  ln.graph.opsets[""] = 17;
  ln.graph.inputs.push_back(test::input_info("x", {2, 6, 24}));
  ln.graph.initializers["gamma"] = test::random_tensor({24}, 83, -2, 2);
  ln.graph.initializers["beta"] = test::random_tensor({24}, 84);
  ln.graph.nodes.push_back(make_node("LayerNormalization", {"x", "gamma", "beta"}, {"y"}, "ln",
                                     {{"epsilon", test::float_attr(1e-5f)}}, 17));
  ln.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  check_case(ln, bits, 7100 + bits, 0.5);
  // InstanceNormalization (§5.19): (30) over (n, c) planes, per-channel gamma/beta; same bound.
  OpCase in{"InstanceNormalization", {}, {{"x", {2, 5, 6, 7}}}, {{"x", {-3, 5}}}};
  in.graph.opsets[""] = 17;
  in.graph.inputs.push_back(test::input_info("x", {2, 5, 6, 7}));
  in.graph.initializers["gamma"] = test::random_tensor({5}, 85, -2, 2);
  in.graph.initializers["beta"] = test::random_tensor({5}, 86);
  in.graph.nodes.push_back(make_node("InstanceNormalization", {"x", "gamma", "beta"}, {"y"}, "in",
                                     {{"epsilon", test::float_attr(1e-5f)}}, 17));
  in.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  check_case(in, bits, 7150 + bits, 0.5);
}

}  // namespace fixpoint::bounds
