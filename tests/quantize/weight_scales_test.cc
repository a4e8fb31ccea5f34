// §2.5 (9): weight scales per output channel (the default) or one per layer
// (--per-tensor-weights): the scales, the codes they give, and what the choice costs a layer whose
// output channels' weights differ 80x in magnitude.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "compile_test_util.h"
#include "fixpoint/program_runner.h"
#include "fixpoint/runtime.h"

namespace fixpoint {
namespace {

using test::make_node;

const int64_t kM = 6;
const float kRowScale[kM] = {1.0f, 0.05f, 0.3f, 4.0f, 0.1f, 0.8f};

// x -> conv (row m of its weights scaled by kRowScale[m]) -> y
Graph conv_rows() {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 3, 8, 8}));
  Tensor w = test::random_tensor({kM, 3, 3, 3}, 41, -0.5f, 0.5f);
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] *= kRowScale[i / 27];
  g.initializers["w"] = w;
  g.nodes.push_back(make_node("Conv", {"x", "w"}, {"y"}, "conv", {{"pads", test::ints_attr({1, 1, 1, 1})}}));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

std::vector<std::map<std::string, Tensor>> samples(uint32_t seed, int n) {
  std::vector<std::map<std::string, Tensor>> v;
  for (int i = 0; i < n; ++i) v.push_back({{"x", test::random_tensor({1, 3, 8, 8}, seed + i, -1.0f, 1.0f)}});
  return v;
}

// Signal-to-noise of each output channel of the program against float, in dB, over samples.
std::vector<double> channel_snr(const Program& p, const Graph& g) {
  std::vector<double> s(kM, 0.0), n(kM, 0.0);
  ProgramRunner run(p);
  for (const auto& x : samples(700, 4)) {
    Tensor ref = Executor(g).run(x).at("y"), got = run.run(x).values.at("y");
    int64_t plane = ref.numel() / kM;
    for (int64_t i = 0; i < ref.numel(); ++i) {
      double r = ref.get_f64(i), d = got.get_f64(i) - r;
      s[i / plane] += r * r;
      n[i / plane] += d * d;
    }
  }
  std::vector<double> db(kM);
  for (int64_t m = 0; m < kM; ++m) db[m] = 10 * std::log10(s[m] / n[m]);
  return db;
}

TEST(WeightScales, PerOutputChannelByDefaultOnePerLayerWhenAsked) {
  Graph g = conv_rows();
  CompileOptions o;
  o.adaptive_rounding = false;  // (10) exactly: codes are R(w / s_w)
  o.out16 = {"conv"};           // y at 16 bits: its error is the weights' (one 8-bit y scale would hide row 1)
  Program pc = test::compile_graph(g, o, samples(300, 4)).program;
  o.per_tensor_weights = true;
  CompileResult rt = test::compile_graph(g, o, samples(300, 4));
  const Program& pt = rt.program;
  EXPECT_EQ(rt.report["weight_scales"], "per tensor");
  const auto& wc = pc.ops[0].as<params::Conv>();
  const auto& wt = pt.ops[0].as<params::Conv>();
  const Tensor& w = g.initializers.at("w");
  double layer_max = 0;
  std::vector<double> row_max(kM, 0.0);
  for (int64_t i = 0; i < w.numel(); ++i) {
    row_max[i / 27] = std::max(row_max[i / 27], std::abs(w.get_f64(i)));
    layer_max = std::max(layer_max, std::abs(w.get_f64(i)));
  }
  for (int64_t m = 0; m < kM; ++m) {
    EXPECT_DOUBLE_EQ(wc.weight_scale.get_f64(m), row_max[m] / 127) << m;  // (9)
    EXPECT_DOUBLE_EQ(wt.weight_scale.get_f64(m), layer_max / 127) << m;
    for (int64_t k = 0; k < 27; ++k)
      EXPECT_EQ(wt.weight.get_f64(m * 27 + k), std::floor(w.get_f64(m * 27 + k) / (layer_max / 127) + 0.5)) << m << "," << k;
  }
  // The small rows keep few codes with one scale: channel 1 (1/80 of the largest row) loses about
  // 20 log10(80) = 38 dB (measured 42.6 against 8.5 dB); the largest row loses nothing.
  std::vector<double> snr_c = channel_snr(pc, g), snr_t = channel_snr(pt, g);
  EXPECT_NEAR(snr_t[3], snr_c[3], 1.0);
  EXPECT_LT(snr_t[1], snr_c[1] - 15);
  std::printf("per-channel vs per-tensor weights, channel 1 (1/80 of the largest row): %.1f vs %.1f dB\n", snr_c[1],
              snr_t[1]);
}

}  // namespace
}  // namespace fixpoint
