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

namespace fixpoint::bounds {

// (26b): a 16-bit program stores the residual stream (an Add a LayerNormalization reads) as int32
// codes (§2.7), and the normalization keeps 16+ bits of every row whatever its magnitude. Row 0
// is 200x smaller than the others (ViT's class token): its 16-bit codes would be ~160 steps.
// Bound as LayerNormalization's (30), plus the Add's 32-bit rounding and (26b)'s (2^-16 of a row).
TEST(LayerNormWideInput, ThirtyTwoBitStreamKeepsASmallRow) {
  const Shape shape{1, 5, 48};
  Graph g;
  g.opsets[""] = 17;
  g.inputs.push_back(test::input_info("a", shape));
  g.inputs.push_back(test::input_info("b", shape));
  g.initializers["gamma"] = test::random_tensor({48}, 91, -2, 2);
  g.initializers["beta"] = test::random_tensor({48}, 92);
  g.nodes.push_back(make_node("Add", {"a", "b"}, {"s"}, "add"));
  g.nodes.push_back(make_node("LayerNormalization", {"s", "gamma", "beta"}, {"y"}, "ln",
                              {{"epsilon", test::float_attr(1e-6f)}}, 17));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  std::mt19937 rng(93);
  auto sample = [&]() {
    std::map<std::string, Tensor> m;
    for (const char* name : {"a", "b"}) {
      Tensor t = test::random_tensor(shape, rng(), -3, 3);
      for (int64_t i = 0; i < 48; ++i) t.data<float>()[i] *= 0.005f;  // row 0
      m[name] = t;
    }
    return m;
  };
  std::vector<std::map<std::string, Tensor>> calib = {sample(), sample(), sample()};
  CompileOptions o;
  o.bits = 16;
  Program p = test::compile_graph(g, o, calib).program;
  ASSERT_EQ(p.tensors.at("s").type, DType::Int32);
  ASSERT_EQ(p.tensors.at("y").type, DType::Int16);
  for (int trial = 0; trial < 3; ++trial) {
    auto in = sample();
    std::map<std::string, Tensor> deq;
    for (const auto& [name, t] : in) deq[name] = dequantized_input(t, p.tensors.at(name));
    ProgramOutputs out = ProgramRunner(p).run(in);
    auto want = Executor(g).run(deq);
    const Tensor &got = out.values.at("y"), &w = want.at("y");
    double sy = p.tensors.at("y").scale, sum_e = 0, sum_r = 0;
    for (int64_t i = 0; i < got.numel(); ++i) {
      ASSERT_LE(std::abs(got.get_f64(i) - w.get_f64(i)), sy * 0.52) << "element " << i << " trial " << trial;
      if (i < 48) {
        sum_e += (got.get_f64(i) - w.get_f64(i)) * (got.get_f64(i) - w.get_f64(i));
        sum_r += w.get_f64(i) * w.get_f64(i);
      }
    }
    EXPECT_GT(10 * std::log10(sum_r / sum_e), 80.0) << "row 0's SNR, trial " << trial;
  }
}

}  // namespace fixpoint::bounds
