// (7d) channel equalization: which activations it may rescale (structure), that the rescaled
// float graph computes what the model does, that the factors follow the calibrated per-channel
// ranges, and that the 8-bit program gains where one channel's range dwarfs the others'.
#include <gtest/gtest.h>

#include <cmath>

#include "compile_test_util.h"
#include "fixpoint/program_runner.h"
#include "fixpoint/runtime.h"
#include "quantize/channel_equalization.h"

namespace fixpoint {
namespace {

using test::make_node;

const int64_t kC = 3, kM = 8, kHW = 12;
// Output channel c of conv1 scaled by kPlanted[c] and conv2's input column c by 1 / kPlanted[c]
// (what a folded BatchNorm leaves): float computes a balanced net, 8 bits see ranges 80x apart
// (Zero-DCE's e6 spans 10x).
const float kPlanted[kM] = {1.0f, 0.1f, 3.0f, 0.2f, 1.0f, 0.5f, 8.0f, 0.15f};

// x -> conv1 -> Relu -> MaxPool -> conv2 -> y; with `also_output`, the Relu's output is a graph
// output too (then nothing may rescale it).
Graph chain(bool also_output = false, int64_t group2 = 1) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, kC, kHW, kHW}));
  Tensor w1 = test::random_tensor({kM, kC, 3, 3}, 31, -0.5f, 0.5f), b1 = test::random_tensor({kM}, 32, 0.0f, 0.2f);
  for (int64_t m = 0; m < kM; ++m) {
    for (int64_t k = 0; k < kC * 9; ++k) w1.data<float>()[m * kC * 9 + k] *= kPlanted[m];
    b1.data<float>()[m] *= kPlanted[m];
  }
  g.initializers["w1"] = w1;
  g.initializers["b1"] = b1;
  Tensor w2 = test::random_tensor({6, kM / group2, 3, 3}, 33, -0.5f, 0.5f);
  int64_t cg = kM / group2;  // input channels per group
  for (int64_t i = 0; i < w2.numel(); ++i) {
    int64_t m = i / (cg * 9), ci = (i / 9) % cg;
    w2.data<float>()[i] /= kPlanted[(m / (6 / group2)) * cg + ci];
  }
  g.initializers["w2"] = w2;
  g.initializers["b2"] = test::random_tensor({6}, 34, -0.1f, 0.1f);
  g.nodes.push_back(make_node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1", {{"pads", test::ints_attr({1, 1, 1, 1})}}));
  g.nodes.push_back(make_node("Relu", {"c1"}, {"r1"}, "relu1"));
  g.nodes.push_back(make_node("MaxPool", {"r1"}, {"p1"}, "pool1",
                              {{"kernel_shape", test::ints_attr({2, 2})}, {"strides", test::ints_attr({2, 2})}}));
  g.nodes.push_back(make_node("Conv", {"p1", "w2", "b2"}, {"y"}, "conv2",
                              {{"pads", test::ints_attr({1, 1, 1, 1})}, {"group", test::int_attr(group2)}}));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  if (also_output) g.outputs.push_back(ValueInfo{"r1", DType::Float32, std::nullopt});
  return g;
}

std::vector<std::map<std::string, Tensor>> images(uint32_t seed, int n) {
  std::vector<std::map<std::string, Tensor>> v;
  for (int i = 0; i < n; ++i) v.push_back({{"x", test::random_tensor({1, kC, kHW, kHW}, seed + i, 0.0f, 1.0f)}});
  return v;
}

// Every tensor of a float run of g on x.
std::map<std::string, Tensor> float_run(const Graph& g, const std::map<std::string, Tensor>& x) {
  std::map<std::string, Tensor> all;
  RunOptions ro;
  ro.on_node = [&](const Node& n, const std::vector<Tensor>& outs) {
    for (size_t i = 0; i < outs.size(); ++i) all[n.outputs[i]] = outs[i].clone();
  };
  Executor(g).run(x, ro);
  return all;
}

double snr_db(const Tensor& ref, const Tensor& got) {
  double s = 0, n = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    double r = ref.get_f64(i), d = got.get_f64(i) - r;
    s += r * r;
    n += d * d;
  }
  return 10 * std::log10(s / n);
}

TEST(ChannelEqualization, GroupsFollowReluAndMaxPoolToGroupOneConvsOnly) {
  auto groups = equalization_groups(chain());
  ASSERT_EQ(groups.size(), 1u);
  const EqualizationGroup& g = groups[0];
  EXPECT_EQ(g.producers, std::vector<size_t>{0});
  EXPECT_EQ(g.consumers, std::vector<size_t>{3});
  EXPECT_EQ(g.tensors, (std::vector<std::string>{"c1", "r1", "p1"}));
  EXPECT_EQ(g.read, std::vector<std::string>{"p1"});
  EXPECT_EQ(g.channels, kM);
  EXPECT_TRUE(equalization_groups(chain(true)).empty());      // a graph output keeps the model's units
  EXPECT_TRUE(equalization_groups(chain(false, 2)).empty());  // a grouped consumer mixes no channels
}

TEST(ChannelEqualization, FactorsFollowTheChannelRangesAndTheProgramGains) {
  Graph g = chain();
  auto calib = images(200, 8);
  CompileOptions o;
  o.channel_equalization = false;
  CompileResult plain = test::compile_graph(g, o, calib);
  o.channel_equalization = true;  // (the default)
  CompileResult eq = test::compile_graph(g, o, calib);
  EXPECT_TRUE(plain.program.channel_factors.empty());
  ASSERT_EQ(eq.program.channel_factors.size(), 3u);
  const std::vector<double>& f = eq.program.channel_factors.at("p1");
  EXPECT_EQ(f, eq.program.channel_factors.at("c1"));
  EXPECT_EQ(f, eq.program.channel_factors.at("r1"));

  // Per-channel max of the pooled activation on the calibration samples, times its factor: the
  // geometric mean of that max and the maxima's geometric mean (kAlpha = 0.5; 16x off at most).
  std::vector<double> r(kM, 0.0);
  for (const auto& s : calib) {
    Tensor p = float_run(g, s).at("p1");
    for (int64_t i = 0; i < p.numel(); ++i) {
      size_t c = static_cast<size_t>((i / (p.numel() / kM)) % kM);
      r[c] = std::max(r[c], p.get_f64(i));
    }
  }
  double log_mean = 0;
  for (double v : r) log_mean += std::log(v) / kM;
  double mean = std::exp(log_mean), top = 0, top_eq = 0;
  for (int64_t c = 0; c < kM; ++c) {
    double want = 1 / std::sqrt(std::clamp(r[c] / mean, 1.0 / 16, 16.0));
    EXPECT_NEAR(f[c], want, 1e-6 * want) << c;  // (calibration runs the fast float kernels: other roundings)
    top = std::max(top, r[c]);
    top_eq = std::max(top_eq, r[c] * f[c]);
  }
  // The 8-bit scale of p1 (a percentile of |x|) shrinks as its largest channel does.
  EXPECT_LT(top_eq, top / 2);
  EXPECT_NEAR(eq.program.tensors.at("p1").scale / plain.program.tensors.at("p1").scale, top_eq / top, 0.1 * top_eq / top);

  ProgramRunner er(eq.program), pr(plain.program);
  double gain = 0;
  for (const auto& s : images(900, 6)) {
    Tensor ref = float_run(g, s).at("y");
    gain += (snr_db(ref, er.run(s).values.at("y")) - snr_db(ref, pr.run(s).values.at("y"))) / 6;
  }
  std::printf("channel equalization: output SNR +%.1f dB on 6 held-out images\n", gain);
  EXPECT_GT(gain, 10.0);  // measured +17.5 dB
}

// The rewrite alone, on a context filled as calibration fills it: the float graph computes the
// model's y (float32 rounding of the rescaled weights: ~1e-7 relative), its rescaled tensors are
// the model's times the factors, and their ranges moved to the program's units.
TEST(ChannelEqualization, TheRewrittenFloatGraphComputesTheModel) {
  Graph g = chain();
  CompileOptions o;
  o.channel_equalization = true;
  CompileContext cx(o);
  cx.g = g;
  for (const auto& t : equalization_tensors(g)) cx.channel_ranges[t];
  for (const auto& s : images(200, 8))
    for (const auto& [t, v] : float_run(g, s)) {
      cx.stats[t].add(v);
      if (cx.channel_ranges.count(t)) cx.channel_ranges[t].add(v);
    }
  Stats before = cx.stats.at("p1");
  equalize_channels(cx);
  ASSERT_TRUE(cx.channels_equalized && cx.stats_equalized);
  const std::vector<double>& f = cx.prog.channel_factors.at("p1");
  double hi = 0;
  for (int64_t c = 0; c < kM; ++c) hi = std::max(hi, cx.channel_ranges.at("p1").hi[c] * f[c]);
  EXPECT_DOUBLE_EQ(cx.stats.at("p1").hi, hi);
  EXPECT_LT(cx.stats.at("p1").hi, before.hi / 3);
  EXPECT_EQ(cx.g.nodes[0].inputs[1].rfind("w1/equalized_", 0), 0u);  // a new name: caches never mix rescalings
  for (const auto& s : images(900, 3)) {
    auto model = float_run(g, s), rewritten = float_run(cx.g, s);
    EXPECT_LT(test::max_rel_err(rewritten.at("y"), model.at("y")), 1e-5);
    EXPECT_LT(test::max_rel_err(rewritten.at("p1"), scaled_channels(model.at("p1"), f)), 1e-5);
  }
}

}  // namespace
}  // namespace fixpoint
