// Calibration statistics (src/quantize/calibration_stats.cc): finite min/max over all samples,
// non-finite values ignored and counted, the exact grids of graph inputs (7a).
#include <gtest/gtest.h>

#include <limits>

#include "compile_test_util.h"
#include "quantize/calibration_stats.h"
#include "quantize/histogram.h"

#include <cmath>
#include <random>

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

// The float32 path (no grid tracking) skips non-finite values like the general one.
TEST(CalibrationStats, Float32RangeSkipsNonFiniteValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Stats s;
  s.add(Tensor::from_f32({nan, -inf, 0.5f, -2.0f, inf, 7.0f, nan}, {7}), false);
  EXPECT_EQ(s.lo, -2.0);
  EXPECT_EQ(s.hi, 7.0);
  Stats none;
  none.add(Tensor::from_f32({nan, inf, -inf}, {3}), false);
  EXPECT_FALSE(none.seen());
  NonFinite n = count_nonfinite(Tensor::from_f32({nan, -inf, 0.5f, inf, nan, nan}, {6}));
  EXPECT_EQ(n.nan, 3);
  EXPECT_EQ(n.inf, 2);
}

// Per-channel sums for bias correction: along axis 1 (Conv) or the last axis (MatMul), non-finite
// values skipped per channel; parts merge by adding, identical copies (second-round shards) once.
TEST(CalibrationStats, ChannelSumsPerAxisAndMerge) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ChannelSums conv;  // [N=2, C=2, 2]: channel 0 = {1, 2, 5, 6}, channel 1 = {3, nan, 7, 8}
  conv.add(Tensor::from_f32({1, 2, 3, nan, 5, 6, 7, 8}, {2, 2, 2}));
  ASSERT_EQ(conv.sum.size(), 2u);
  EXPECT_EQ(conv.mean(0), 3.5);
  EXPECT_EQ(conv.mean(1), 6.0);  // (3 + 7 + 8) / 3
  ChannelSums mm;
  mm.axis = -1;  // [2, 3]: channels along the last axis
  mm.add(Tensor::from_f32({1, 2, 3, 5, 6, 7}, {2, 3}));
  EXPECT_EQ(mm.mean(0), 3.0);
  EXPECT_EQ(mm.mean(2), 5.0);
  mm.add(Tensor::from_f32({1, 2, 3, 4}, {1, 4}));  // another channel count: not this axis, ignored
  EXPECT_EQ(mm.count[0], 2.0);

  Node gemm;
  gemm.op_type = "Gemm";
  EXPECT_EQ(channel_axis(gemm), 1);
  gemm.attrs["transA"] = Attribute::of_int(1);
  EXPECT_EQ(channel_axis(gemm), 0);
  gemm.op_type = "Relu";
  EXPECT_FALSE(channel_axis(gemm));

  CalibrationCache a, b;
  a.channels["x"] = conv;
  b.channels["x"] = conv;  // an identical copy: kept once
  merge_calibration(a, b);
  EXPECT_EQ(a.channels["x"].count[0], 4.0);
  ChannelSums other;
  other.add(Tensor::from_f32({10, 20}, {1, 2, 1}));
  b.channels["x"] = other;
  merge_calibration(a, b);
  EXPECT_EQ(a.channels["x"].count[0], 5.0);
  EXPECT_EQ(a.channels["x"].mean(0), (14.0 + 10.0) / 5.0);
  EXPECT_EQ(a.channels["x"].mean(1), (18.0 + 20.0) / 4.0);
}

// The blocked, multi-threaded histogram equals the plain count of min(trunc(|v| kBins / max),
// kBins - 1) over the finite values (several chunks; zeros, NaN, Inf, values beyond max).
TEST(CalibrationStats, HistogramEqualsThePlainCount) {
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(200003);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 7 == 0 ? 0.0f : d(rng);
  v[10] = std::numeric_limits<float>::quiet_NaN();
  v[70000] = std::numeric_limits<float>::infinity();
  v[150000] = -std::numeric_limits<float>::infinity();
  v[150001] = 1e6f;
  const double max = 3.0;
  AbsHistogram h(max);
  h.add(Tensor::from_f32(v, {static_cast<int64_t>(v.size())}));
  std::vector<double> want(AbsHistogram::kBins, 0.0);
  for (float x : v) {
    double a = std::abs(static_cast<double>(x));
    if (!std::isfinite(a)) continue;
    want[std::min(static_cast<int>(a * (AbsHistogram::kBins / max)), AbsHistogram::kBins - 1)] += 1.0;
  }
  EXPECT_EQ(h.counts(), want);
}

// The percentile threshold is the upper edge of the first bin where the count from 0 reaches
// percentile / 100 of all values (bins of width 1 here: max 2048 over 2048 bins).
TEST(CalibrationStats, PercentileThresholdFollowsThePercentile) {
  std::vector<float> v(9990, 0.5f);      // bin 0
  v.insert(v.end(), 9, 100.5f);          // bin 100: 9999 values up to here
  v.push_back(-1000.5f);                 // bin 1000 (|x|)
  AbsHistogram h(2048.0);
  h.add(Tensor::from_f32(v, {static_cast<int64_t>(v.size())}));
  EXPECT_DOUBLE_EQ(h.threshold("percentile", 255, kDefaultCalibPercentile), 101.0);
  EXPECT_DOUBLE_EQ(h.threshold("percentile", 255, 99.9), 1.0);
  EXPECT_DOUBLE_EQ(h.threshold("percentile", 255, 100.0), 1001.0);
}

// A cache keeps the statistics of every graph it was filled for (analyze alternates the 8-bit
// and 16-bit graphs): recalling one brings back its own numbers, not the last graph's.
TEST(CalibrationStats, CacheRecallsTheStatisticsOfEachGraph) {
  auto value = [](const std::string& fp, double hi) {
    CalibrationCache c;
    c.filled = true;
    c.fingerprint = fp;
    c.stats["t"].add(Tensor::from_f32({0.0f, static_cast<float>(hi)}, {2}), false);
    return c;
  };
  CalibrationCache cache;
  EXPECT_FALSE(recall_calibration(cache, "g8"));
  remember_calibration(cache, value("g8", 1.0));
  EXPECT_TRUE(recall_calibration(cache, "g8"));
  EXPECT_FALSE(recall_calibration(cache, "g16"));  // never measured: calibrate
  remember_calibration(cache, value("g16", 2.0));
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(recall_calibration(cache, "g8"));
    EXPECT_EQ(cache.fingerprint, "g8");
    EXPECT_EQ(cache.stats.at("t").hi, 1.0);
    ASSERT_TRUE(recall_calibration(cache, "g16"));
    EXPECT_EQ(cache.fingerprint, "g16");
    EXPECT_EQ(cache.stats.at("t").hi, 2.0);
    EXPECT_EQ(cache.earlier.size(), 1u);
  }
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
