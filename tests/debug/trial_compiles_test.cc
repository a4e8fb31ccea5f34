// Compiling one model many times (ModelCompiler) and running the trial programs from their first
// changed op (TrialRuns): the programs and outputs are those of a plain compile and a whole run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "fixpoint/output_error.h"
#include "quantize/compile_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

// x -> conv1 -> Relu (r) -> conv2 + bias (s) -> HardSwish (h) -> conv3 (y1), and a Sigmoid of s
// (y2): weights, tables, a curve, bias correction, adaptive rounding, two outputs.
Graph chain_graph() {
  Graph g;
  g.opsets[""] = 14;
  g.inputs.push_back(test::input_info("x", {1, 4, 6, 6}));
  g.initializers["w1"] = test::random_tensor({6, 4, 3, 3}, 1);
  g.initializers["w2"] = test::random_tensor({6, 6, 1, 1}, 2, -0.5f, 0.5f);
  // Channel 0 of conv2 has near-zero weights and a bias: its weight scale is the floor the bias
  // code sets (§4), which follows r's scale, so a range factor on r changes conv2's weight scales.
  for (int k = 0; k < 6; ++k) g.initializers["w2"].data<float>()[k] = 1e-17f * static_cast<float>(k - 2);
  g.initializers["b2"] = test::random_tensor({6}, 3, 0.6f, 0.7f);
  g.initializers["w3"] = test::random_tensor({3, 6, 3, 3}, 4);
  g.nodes.push_back(make_node("Conv", {"x", "w1"}, {"c"}, "conv1", {{"pads", test::ints_attr({1, 1, 1, 1})}}));
  g.nodes.push_back(make_node("Relu", {"c"}, {"r"}, "relu"));
  g.nodes.push_back(make_node("Conv", {"r", "w2", "b2"}, {"s"}, "conv2"));
  g.nodes.push_back(make_node("HardSwish", {"s"}, {"h"}, "hswish"));
  g.nodes.push_back(make_node("Conv", {"h", "w3"}, {"y1"}, "conv3"));
  g.nodes.push_back(make_node("Sigmoid", {"s"}, {"y2"}, "sigmoid"));
  g.outputs.push_back(ValueInfo{"y1", DType::Float32, std::nullopt});
  g.outputs.push_back(ValueInfo{"y2", DType::Float32, std::nullopt});
  return g;
}

struct Fixture {
  std::string dir = cat(std::filesystem::temp_directory_path().string(), "/fixpoint_trial_test_", getpid());
  std::string path = dir + "/m.onnx";
  std::vector<std::map<std::string, Tensor>> calib;
  Fixture() {
    std::filesystem::create_directories(dir);
    save_onnx(chain_graph(), path);
    for (uint32_t i = 0; i < 4; ++i) calib.push_back({{"x", test::random_tensor({1, 4, 6, 6}, 70 + i, -2.0f, 2.9f)}});
  }
  ~Fixture() { std::filesystem::remove_all(dir); }
};

// Option sets in an order that returns to earlier ones: each compile may reuse what earlier ones
// prepared, and must still give compile_model's artifact.
std::vector<CompileOptions> option_sets() {
  std::vector<CompileOptions> v;
  CompileOptions o;
  o.wide_intermediates = false;  // every tensor at 8 bits, so each range factor has a tensor of its own
  v.push_back(o);
  for (const char* t : {"r", "s", "h"}) {
    CompileOptions f = o;
    f.range_factors = {{t, 0.7}};
    v.push_back(f);
  }
  CompileOptions b16 = o;
  b16.bits16 = {"conv2"};
  v.push_back(b16);
  CompileOptions sixteen = o;
  sixteen.bits = 16;
  v.push_back(sixteen);
  CompileOptions rounding = o;
  rounding.adaptive_rounding = true;
  v.push_back(rounding);
  for (double f : {0.7, 1.5}) {  // conv2 rounded again, from what the first rounding kept
    CompileOptions rf = rounding;
    rf.range_factors = {{"r", f}};
    v.push_back(rf);
  }
  v.push_back(o);
  CompileOptions wide;  // another graph state (fused intermediates)
  v.push_back(wide);
  v.push_back(v[2]);
  return v;
}

TEST(ModelCompiler, GivesTheArtifactsOfPlainCompilesInAnyOrder) {
  Fixture fx;
  test::MemorySource src(fx.calib);
  ModelCompiler mc(fx.path, {});
  auto cache = make_calibration_cache();  // as the searches share one
  int i = 0;
  for (CompileOptions o : option_sets()) {
    std::string plain = test::artifact_bytes(compile_model(fx.path, o, &src).program, cat(fx.dir, "/p", i));
    o.calibration_cache = cache;
    std::string repeated = test::artifact_bytes(mc.compile(o, &src).program, cat(fx.dir, "/r", i));
    ASSERT_GT(plain.size(), 100u);
    EXPECT_EQ(plain, repeated) << "option set " << i;
    ++i;
  }
}

TEST(TrialRuns, RunFromTheFirstChangedOpGiveTheOutputsOfWholeRuns) {
  Fixture fx;
  test::MemorySource src(fx.calib);
  ModelCompiler mc(fx.path, {});
  CompileOptions o;
  o.wide_intermediates = false;
  o.calibration_cache = make_calibration_cache();
  Program base = mc.compile(o, &src).program;
  OutputSets inputs(fx.calib.begin(), fx.calib.end());
  for (int threads : {1, 2}) {
    TrialRuns runs(inputs, threads);
    OutputSets b = runs.set_base(base);
    OutputSets whole = run_program(base, inputs, threads);
    EXPECT_EQ(output_error(whole, b).noise, 0.0);
    // Each tensor's producer is the first op whose encoding changes.
    for (auto [t, producer] : {std::pair{"r", "conv1"}, {"s", "conv2"}, {"h", "hswish"}}) {
      CompileOptions f = o;
      f.range_factors = {{t, 0.6}};
      Program trial = mc.compile(f, &src).program;
      size_t first = first_changed_op(base, trial);
      ASSERT_LT(first, trial.ops.size()) << t;
      EXPECT_EQ(trial.ops[first].node.name, producer) << t;
      OutputSets resumed = runs.run(trial), full = run_program(trial, inputs, threads);
      ASSERT_EQ(resumed.size(), full.size());
      for (size_t i = 0; i < full.size(); ++i)
        for (const auto& [name, v] : full[i]) EXPECT_TRUE(bit_equal(v, resumed[i].at(name))) << t << " " << name;
      EXPECT_GT(output_error(whole, full).noise, 0.0) << t;  // the trial computes something else
    }
    EXPECT_EQ(first_changed_op(base, mc.compile(o, &src).program), base.ops.size());  // the same program
    Program recoded = base;  // an encoding alone (as of a float op's output, whose params are empty)
    recoded.tensors.at("h").scale *= 2;
    size_t at = first_changed_op(base, recoded);
    ASSERT_LT(at, base.ops.size());
    EXPECT_EQ(base.ops[at].node.name, "hswish");
    // Kept tensors that do not fit: trials run whole, with the same outputs.
    TrialRuns small(inputs, threads, 16);
    small.set_base(base);
    CompileOptions f = o;
    f.range_factors = {{"s", 1.5}};
    Program trial = mc.compile(f, &src).program;
    OutputSets a = small.run(trial), full = run_program(trial, inputs, threads);
    for (size_t i = 0; i < full.size(); ++i)
      for (const auto& [name, v] : full[i]) EXPECT_TRUE(bit_equal(v, a[i].at(name)));
  }
}

}  // namespace
}  // namespace fixpoint
