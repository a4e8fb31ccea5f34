// batchnorm_to_depthwise: a standalone BatchNormalization becomes a depthwise 1x1 Conv (structure,
// float numbers within 1e-5) and an int8 program runs it on the accelerator, not on the CPU.
#include "pass_test_util.h"
#include "fixpoint/program_runner.h"
#include "quantize/compile_test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

Graph standalone_bn(int64_t C) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {2, C, 5, 6}));
  g.initializers["gamma"] = test::random_tensor({C}, 3, 0.5f, 1.5f);
  g.initializers["beta"] = test::random_tensor({C}, 4);
  g.initializers["mean"] = test::random_tensor({C}, 5);
  g.initializers["var"] = test::random_tensor({C}, 6, 0.2f, 2.0f);
  g.nodes.push_back(make_node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"bn"}, "bn"));
  g.nodes.push_back(make_node("Relu", {"bn"}, {"y"}, "relu"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

TEST(BatchNormToDepthwise, RewritesStructureAndKeepsNumbers) {
  Graph g = test::rewrite_and_check(standalone_bn(6), make_batchnorm_to_depthwise(),
                                    {{"x", test::random_tensor({2, 6, 5, 6}, 7)}}, 1);
  ASSERT_EQ(test::count_op(g, "BatchNormalization"), 0);
  const Node& conv = g.nodes[0];
  EXPECT_EQ(conv.op_type, "Conv");
  EXPECT_EQ(conv.name, "bn");            // the user's node keeps its name and output
  EXPECT_EQ(conv.outputs[0], "bn");
  EXPECT_EQ(conv.attr_int("group", 0), 6);
  EXPECT_EQ(g.initializers.at(conv.inputs[1]).shape(), (Shape{6, 1, 1, 1}));
}

TEST(BatchNormToDepthwise, LeavesTrainingModeAndUnknownChannelsAlone) {
  Graph g = standalone_bn(4);
  g.nodes[0].attrs["training_mode"] = test::int_attr(1);
  PassLog log;
  EXPECT_EQ(make_batchnorm_to_depthwise()->run(g, log), 0);
  Graph h = standalone_bn(4);
  h.inputs[0] = test::input_info("x", {2, 4});  // rank 2: no spatial dims to convolve over
  EXPECT_EQ(make_batchnorm_to_depthwise()->run(h, log), 0);
}

TEST(BatchNormToDepthwise, Int8ProgramRunsItOnTheAccelerator) {
  Graph g = standalone_bn(6);
  std::vector<std::map<std::string, Tensor>> calib;
  for (uint32_t s = 0; s < 3; ++s) calib.push_back({{"x", test::random_tensor({2, 6, 5, 6}, 20 + s)}});
  CompileResult r = test::compile_graph(g, CompileOptions{}, calib);
  EXPECT_TRUE(r.report["fallback_nodes"].empty()) << r.report["fallback_nodes"].dump();
  EXPECT_EQ(r.report["subgraph_counts"]["accelerator"], 1);
  EXPECT_EQ(r.report["subgraph_counts"]["cpu"], 0);
  Tensor x = calib[0].at("x");
  Tensor want = Executor(g).run({{"x", x}}).at("y");
  Tensor got = ProgramRunner(r.program).run({{"x", x}}).values.at("y");
  EXPECT_LE(test::max_rel_err(want, got), 0.02);  // a few 8-bit steps of the output's peak
}

}  // namespace
}  // namespace fixpoint
