// The run's buffer plan: after the first run, a program allocates nothing but what it hands
// back (its outputs); every other tensor and scratch buffer comes from storage freed earlier.
// A kernel that made its output twice (the depthwise conv's fast path handing the op to the
// direct kernel, which made its own) had dropped the first buffer, so every run allocated and
// zeroed a fresh one (OCR det: 21 MB a run).
#include <gtest/gtest.h>

#include <cstring>

#include "fixpoint/program_runner.h"
#include "passes/pass_test_util.h"
#include "quantize/compile_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

// x -> depthwise 3x3 -> Relu -> 1x1 conv -> + x -> y.
Graph depthwise_block(int64_t C) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, C, 24, 20}));
  g.initializers["wd"] = test::random_tensor({C, 1, 3, 3}, 1);
  g.initializers["bd"] = test::random_tensor({C}, 2);
  g.initializers["wp"] = test::random_tensor({C, C, 1, 1}, 3);
  Node dw = make_node("Conv", {"x", "wd", "bd"}, {"d"}, "dw");
  dw.attrs["group"] = test::int_attr(C);
  dw.attrs["pads"] = test::ints_attr({1, 1, 1, 1});
  g.nodes.push_back(dw);
  g.nodes.push_back(make_node("Relu", {"d"}, {"r"}, "relu"));
  g.nodes.push_back(make_node("Conv", {"r", "wp"}, {"p"}, "pw"));
  g.nodes.push_back(make_node("Add", {"p", "x"}, {"y"}, "add"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

// depthwise_block(16) compiled on two random inputs (seeds seed, seed + 1), which it also runs on.
struct CompiledBlock {
  std::vector<std::map<std::string, Tensor>> inputs;
  CompileResult r;
};
CompiledBlock compiled_block(uint32_t seed) {
  CompiledBlock b;
  for (uint32_t s = 0; s < 2; ++s) b.inputs.push_back({{"x", test::random_tensor({1, 16, 24, 20}, seed + s)}});
  b.r = test::compile_graph(depthwise_block(16), CompileOptions{}, b.inputs);
  return b;
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw());
  return {p, p + t.nbytes()};
}

TEST(BufferPlan, RunsAfterTheFirstAllocateOnlyTheirOutputs) {
  const CompiledBlock b = compiled_block(10);
  const auto& calib = b.inputs;
  const CompileResult& r = b.r;
  for (int threads : {1, 2}) {
    ProgramRunner runner(r.program);
    runner.set_threads(threads);
    std::vector<Tensor> ys;
    for (int run = 0; run < 3; ++run) {
      ProgramOutputs out = runner.run(calib[0]);
      size_t handed = 0;
      for (const auto& [name, codes] : out.codes) handed += codes.capacity_bytes();
      ASSERT_GT(handed, 0u);
      if (run == 0) EXPECT_GT(runner.fresh_bytes(), handed);  // the first run builds the plan
      else EXPECT_LE(runner.fresh_bytes(), handed) << "run " << run << ", " << threads << " thread(s)";
      ys.push_back(out.codes.at("y"));
    }
    ASSERT_EQ(ys[0].nbytes(), ys[2].nbytes());
    EXPECT_EQ(std::memcmp(ys[0].raw(), ys[2].raw(), ys[0].nbytes()), 0);  // reused storage, the same codes
  }
}

// Outputs the caller dropped come back to the run's pool (BufferPool::lend / reclaim): once two
// runs have handed theirs back, a run allocates nothing. Outputs the caller still holds are never
// reused: run 0's codes and floats keep their bytes through runs on another input.
TEST(BufferPlan, OutputsTheCallerDroppedAreReusedAndHeldOnesAreNot) {
  const CompiledBlock b = compiled_block(20);
  const auto& calib = b.inputs;
  const CompileResult& r = b.r;
  for (int threads : {1, 2}) {
    ProgramRunner runner(r.program);
    runner.set_threads(threads);
    const ProgramOutputs held = runner.run(calib[0]);
    const Tensor& y_codes = held.codes.at("y");
    const Tensor& y = held.values.at("y");
    const std::vector<uint8_t> codes0 = bytes_of(y_codes);
    const std::vector<float> values0 = y.to_f32_vector();
    std::vector<uint8_t> codes1;
    for (int run = 1; run <= 4; ++run) {
      ProgramOutputs out = runner.run(calib[1]);  // dropped at the end of the iteration
      const std::vector<uint8_t> now = bytes_of(out.codes.at("y"));
      if (run == 1) codes1 = now;
      EXPECT_EQ(now, codes1) << "run " << run;
      if (run >= 2) {
        EXPECT_EQ(runner.fresh_bytes(), 0u) << "run " << run << ", " << threads << " thread(s)";
      }
    }
    ASSERT_NE(codes0, codes1);  // (the two inputs give different codes, so a reuse would show)
    EXPECT_EQ(bytes_of(y_codes), codes0);
    EXPECT_EQ(y.to_f32_vector(), values0);
  }
}

}  // namespace
}  // namespace fixpoint
