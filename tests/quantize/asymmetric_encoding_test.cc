// (8a)/(8b): a lopsided signed range gets uint8 codes with a zero point, and its low end, often a
// floor many values sit on, lies exactly on the grid.
#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "fixpoint/program_runner.h"

namespace fixpoint {
namespace {

using test::make_node;

// y = Relu(x) - 0.1: the table takes every negative x to the floor -0.1.
Graph floor_graph() {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 4, 6, 6}));
  g.initializers["c"] = Tensor::scalar_f32(0.1f);
  g.nodes.push_back(make_node("Relu", {"x"}, {"r"}, "relu"));
  g.nodes.push_back(make_node("Sub", {"r", "c"}, {"y"}, "sub"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

TEST(AsymmetricEncoding, TheFloorOfALopsidedRangeIsExactlyOnTheGrid) {
  std::vector<std::map<std::string, Tensor>> calib;
  for (uint32_t i = 0; i < 3; ++i) calib.push_back({{"x", test::random_tensor({1, 4, 6, 6}, 40 + i, -2.0f, 2.9f)}});
  CompileOptions o;
  Program p = test::compile_graph(floor_graph(), o, calib).program;
  const QParams& q = p.tensors.at("y");
  ASSERT_EQ(q.type, DType::UInt8);
  ASSERT_GE(q.zero_point, 1);
  const float floor_value = 0.0f - 0.1f;  // what the float graph computes on the plateau
  EXPECT_NEAR(-static_cast<double>(q.zero_point) * q.scale, floor_value, 1e-7);  // (8b)
  EXPECT_LE(q.scale, 1.25 * (2.9 + 0.1) / 255 + 1e-12);  // at most 1.25x the (8a) step
  Tensor x = test::random_tensor({1, 4, 6, 6}, 7, -2.0f, 2.9f);
  Tensor y = ProgramRunner(p).run({{"x", x}}).values.at("y");
  int on_floor = 0;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (x.data<float>()[i] < 0) {
      EXPECT_NEAR(y.get_f64(i), floor_value, 1e-6) << i;  // exact up to float32 output storage
      ++on_floor;
    }
  EXPECT_GT(on_floor, 20);
  // --symmetric: int8 codes, zero point 0.
  o.asymmetric = false;
  Program ps = test::compile_graph(floor_graph(), o, calib).program;
  EXPECT_EQ(ps.tensors.at("y").type, DType::Int8);
  EXPECT_EQ(ps.tensors.at("y").zero_point, 0);
}

}  // namespace
}  // namespace fixpoint
