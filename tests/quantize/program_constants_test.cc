// The compiled program keeps the float constants its ops still read and no others: an integer
// Conv's weights live in its prepared constants only.
#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "fixpoint/program_runner.h"
#include "fixpoint/runtime.h"

namespace fixpoint {
namespace {

using test::make_node;

TEST(ProgramConstants, OnlyConstantsThatOpsReadAreKept) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 3, 6, 6}));
  g.initializers["w"] = test::random_tensor({4, 3, 3, 3}, 1);
  g.initializers["b"] = test::random_tensor({4}, 2);
  g.initializers["c"] = test::random_tensor({1, 1, 6, 6}, 3, 0.5f, 2.0f);  // spatial: not folded into the Conv
  g.initializers["shape"] = Tensor::from_i64({1, -1}, {2});
  g.nodes.push_back(make_node("Conv", {"x", "w", "b"}, {"h"}, "conv", {{"pads", test::ints_attr({1, 1, 1, 1})}}));
  g.nodes.push_back(make_node("Mul", {"h", "c"}, {"m"}, "mul"));
  g.nodes.push_back(make_node("Reshape", {"m", "shape"}, {"y"}, "flatten"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  std::vector<std::map<std::string, Tensor>> calib = {{{"x", test::random_tensor({1, 3, 6, 6}, 4)}},
                                                      {{"x", test::random_tensor({1, 3, 6, 6}, 5)}}};
  CompileOptions o;
  o.deny = {"op:Mul"};  // the Mul runs on the CPU in float and reads c there
  Program p = test::compile_graph(g, o, calib).program;
  std::vector<std::string> kept;
  for (const auto& [name, t] : p.float_constants) kept.push_back(name);
  EXPECT_EQ(kept, (std::vector<std::string>{"c", "shape"}));
  // And it still computes the model: on a calibration sample (inside the calibrated ranges)
  // within a few 8-bit steps of the output's peak.
  Tensor x = calib[0].at("x");
  Tensor want = Executor(g).run({{"x", x}}).at("y");
  Tensor got = ProgramRunner(p).run({{"x", x}}).values.at("y");
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_LE(test::max_rel_err(want, got), 0.05);
}

}  // namespace
}  // namespace fixpoint
