#include <gtest/gtest.h>

#include "fixpoint/passes.h"
#include "fixpoint/runtime.h"
#include "test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

TEST(FuseConvBatchNorm, FoldsAndKeepsNumbers) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 3, 7, 7}));
  g.initializers["w"] = test::random_tensor({4, 3, 3, 3}, 1);
  g.initializers["b"] = test::random_tensor({4}, 2);
  g.initializers["gamma"] = test::random_tensor({4}, 3, 0.5f, 1.5f);
  g.initializers["beta"] = test::random_tensor({4}, 4);
  g.initializers["mean"] = test::random_tensor({4}, 5);
  g.initializers["var"] = test::random_tensor({4}, 6, 0.2f, 2.0f);
  g.nodes.push_back(make_node("Conv", {"x", "w", "b"}, {"c"}, "conv", {{"pads", test::ints_attr({1, 1, 1, 1})}}));
  g.nodes.push_back(make_node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"}, "bn"));
  g.nodes.push_back(make_node("Relu", {"bn"}, {"y"}, "relu"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  Tensor x = test::random_tensor({2, 3, 7, 7}, 7);
  Tensor before = Executor(g).run({{"x", x}}).at("y");
  PassLog log;
  EXPECT_EQ(make_fuse_conv_batchnorm()->run(g, log), 1);
  g.validate();
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op_type, "Conv");
  EXPECT_EQ(g.nodes[0].outputs[0], "bn");
  Tensor after = Executor(g).run({{"x", x}}).at("y");
  // Folding changes float rounding only: within 1e-5 relative to the output's peak.
  EXPECT_LE(test::max_rel_err(before, after), 1e-5);
}

TEST(FuseConvBatchNorm, LeavesSharedConvOutputAlone) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {1, 1, 3, 3}));
  g.initializers["w"] = test::random_tensor({1, 1, 1, 1}, 1);
  for (const char* n : {"gamma", "beta", "mean", "var"}) g.initializers[n] = Tensor::from_f32({1}, {1});
  g.nodes.push_back(make_node("Conv", {"x", "w"}, {"c"}, "conv"));
  g.nodes.push_back(make_node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"}, "bn"));
  g.nodes.push_back(make_node("Add", {"bn", "c"}, {"y"}, "add"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  PassLog log;
  EXPECT_EQ(make_fuse_conv_batchnorm()->run(g, log), 0);
}

}  // namespace
}  // namespace fixpoint
