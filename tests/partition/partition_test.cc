#include <gtest/gtest.h>

#include "fixpoint/partition.h"
#include "test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

std::vector<Subgraph> group(const Graph& g, const Partition& p) {
  std::vector<std::vector<std::string>> ins, outs, members;
  std::vector<bool> acc;
  for (const auto& n : g.nodes) {
    ins.push_back(n.inputs);
    outs.push_back(n.outputs);
    members.push_back({n.name});
    acc.push_back(p.on_accelerator(n.name));
  }
  return group_subgraphs(ins, outs, acc, members);
}

// x -> conv -> relu -> topk(values) -> conv2 ; relu also -> conv3 ; conv2 + conv3 -> add
Graph diamond() {
  Graph g;
  g.inputs.push_back(test::input_info("x", {1, 4, 8, 8}));
  g.initializers["w"] = test::random_tensor({4, 4, 1, 1}, 1);
  g.initializers["k"] = Tensor::from_i64({8}, {1});
  g.nodes.push_back(make_node("Conv", {"x", "w"}, {"c"}, "conv"));
  g.nodes.push_back(make_node("Relu", {"c"}, {"r"}, "relu"));
  g.nodes.push_back(make_node("TopK", {"r", "k"}, {"v", "i"}, "topk", {{"axis", test::int_attr(-1)}}));
  g.nodes.push_back(make_node("Conv", {"v", "w"}, {"c2"}, "conv2"));
  g.nodes.push_back(make_node("Conv", {"r", "w"}, {"c3"}, "conv3"));
  g.nodes.push_back(make_node("Add", {"c2", "c3"}, {"y"}, "add"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  g.outputs.push_back(ValueInfo{"i", DType::Int64, std::nullopt});
  return g;
}

TEST(Partition, UnsupportedOpSplitsConvexly) {
  Graph g = diamond();
  Partition p = partition_graph(g, {});
  ASSERT_EQ(p.cpu_reason.size(), 1u);
  EXPECT_EQ(p.cpu_reason.at("topk"), "unsupported op: no integer kernel for TopK");
  auto sgs = group(g, p);
  // conv, relu, conv3 may share a group; conv2/add need topk's result, which needs relu: they
  // must not join the first group (that group would both feed and wait for the CPU).
  ASSERT_EQ(sgs.size(), 3u);
  EXPECT_EQ(sgs[0].kind, "accelerator");
  EXPECT_EQ(sgs[0].nodes, (std::vector<std::string>{"conv", "relu", "conv3"}));
  EXPECT_EQ(sgs[1].kind, "cpu");
  EXPECT_EQ(sgs[2].nodes, (std::vector<std::string>{"conv2", "add"}));
}

TEST(Partition, DenyAllowAndTheirReasons) {
  Graph g = diamond();
  Partition p = partition_graph(g, PartitionOptions{{"op:Relu", "conv3"}, {}});
  EXPECT_EQ(p.cpu_reason.at("relu"), "denied by user (--deny)");
  EXPECT_EQ(p.cpu_reason.at("conv3"), "denied by user (--deny)");
  EXPECT_TRUE(p.on_accelerator("conv"));
  Partition q = partition_graph(g, PartitionOptions{{}, {"conv*"}});
  EXPECT_EQ(q.cpu_reason.at("add"), "denied by user (not in --allow)");
  EXPECT_TRUE(q.on_accelerator("conv2"));
}

TEST(Partition, SmallIslandBetweenCpuNodesMovesToTheCpu) {
  // topk -> neg (supported, alone, between CPU nodes) -> topk2: converting twice saves nothing.
  Graph g;
  g.inputs.push_back(test::input_info("x", {2, 8}));
  g.initializers["k"] = Tensor::from_i64({4}, {1});
  g.nodes.push_back(make_node("TopK", {"x", "k"}, {"v", "i"}, "topk"));
  g.nodes.push_back(make_node("Neg", {"v"}, {"n"}, "neg"));
  g.nodes.push_back(make_node("TopK", {"n", "k"}, {"y", "j"}, "topk2"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  Partition p = partition_graph(g, {});
  ASSERT_TRUE(p.cpu_reason.count("neg"));
  EXPECT_NE(p.cpu_reason.at("neg").find("small accelerator island"), std::string::npos);
  EXPECT_EQ(group(g, p).size(), 1u);
  // The same node fed by a graph input is no island: the input is quantized anyway.
  g.nodes[1].inputs[0] = "x";
  EXPECT_TRUE(partition_graph(g, {}).on_accelerator("neg"));
}

TEST(Capability, ReasonsNameTheAttribute) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {1, 2, 4, 4}));
  g.initializers["scales"] = Tensor::from_f32({1, 1, 2, 2}, {4});
  g.nodes.push_back(make_node("Resize", {"x", "", "scales"}, {"y"}, "resize", {{"mode", test::string_attr("cubic")}}));
  Capability c = accelerator_supports(g, g.nodes[0]);
  EXPECT_FALSE(c.supported);
  EXPECT_EQ(c.reason, "unsupported attribute: mode 'cubic' (nearest and linear have integer kernels)");
  for (const char* mode : {"nearest", "linear"}) {
    g.nodes[0].attrs["mode"] = test::string_attr(mode);
    EXPECT_TRUE(accelerator_supports(g, g.nodes[0]).supported) << mode;
  }
  g.nodes[0].attrs["coordinate_transformation_mode"] = test::string_attr("tf_crop_and_resize");
  EXPECT_EQ(accelerator_supports(g, g.nodes[0]).reason,
            "unsupported attribute: linear tf_crop_and_resize (extrapolation) has no integer kernel");
  Node custom = make_node("Foo", {"x"}, {"z"}, "foo");
  custom.domain = "com.example";
  EXPECT_EQ(accelerator_supports(g, custom).reason, "unsupported op: custom domain 'com.example'");
}

}  // namespace
}  // namespace fixpoint
