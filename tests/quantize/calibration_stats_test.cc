// Calibration statistics (src/quantize/calibration_stats.cc): finite min/max over all samples,
// non-finite values ignored and counted, the exact grids of graph inputs (7a).
#include <gtest/gtest.h>

#include <limits>

#include "compile_test_util.h"
#include "quantize/calibration_stats.h"

namespace fixpoint {
namespace {

TEST(CalibrationStats, FiniteRangeAndGrids) {
  Stats s;
  s.add(Tensor::from_f32({3.0f / 255, std::numeric_limits<float>::quiet_NaN(), 200.0f / 255,
                               std::numeric_limits<float>::infinity()},
                              {4}),
        true);
  EXPECT_FLOAT_EQ(s.lo, 3.0f / 255);
  EXPECT_FLOAT_EQ(s.hi, 200.0f / 255);
  EXPECT_FALSE(s.on_grid[0]);  // not integers
  EXPECT_TRUE(s.on_grid[1]);   // k / 255
  EXPECT_FALSE(s.on_grid[2]);
  s.add(Tensor::from_f32({-0.25f}, {1}), true);
  EXPECT_FLOAT_EQ(s.lo, -0.25f);
  EXPECT_FALSE(s.on_grid[1]);
  Stats never;
  EXPECT_FALSE(never.seen());
  EXPECT_EQ(never.absmax(), 0.0);
}

TEST(CalibrationStats, RangesInTheReportAreTheFloatRunsExtremes) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 6}));
  g.nodes.push_back(test::make_node("Tanh", {"x"}, {"y"}, "tanh"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  std::vector<std::map<std::string, Tensor>> calib = {
      {{"x", Tensor::from_f32({-0.5f, 0.1f, 0.2f, 0.3f, 0.4f, 0.5f}, {1, 6})}},
      {{"x", Tensor::from_f32({-0.1f, 0.1f, 0.2f, 0.3f, 1.5f, std::numeric_limits<float>::quiet_NaN()}, {1, 6})}}};
  CompileResult r = test::compile_graph(g, CompileOptions{}, calib);
  const auto& out = r.report["layers"][0]["outputs"][0];
  EXPECT_NEAR(out["range"][0].get<double>(), std::tanh(-0.5), 1e-6);
  EXPECT_NEAR(out["range"][1].get<double>(), std::tanh(1.5), 1e-6);
  EXPECT_EQ(r.report["calibration_nonfinite"]["input_nan"], 1);
  EXPECT_EQ(r.report["calibration_nonfinite"]["tensor_nan"], 1);
}

}  // namespace
}  // namespace fixpoint
