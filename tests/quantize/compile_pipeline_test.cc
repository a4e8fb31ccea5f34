// The compiler's pipeline (src/quantize/compiler.cc) and its prepare registry: a model compiles
// to the same artifact from a file, from ONNX bytes and from an in-memory graph; every op type
// the capability table admits has a prepare step.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "compile_test_util.h"
#include "fixpoint/partition.h"
#include "quantize/prepare/prepare.h"

namespace fixpoint {
namespace {

using test::make_node;

Graph small_graph() {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 2, 6, 6}));
  g.initializers["w"] = test::random_tensor({4, 2, 3, 3}, 5);
  g.initializers["b"] = test::random_tensor({4}, 6);
  g.nodes.push_back(make_node("Conv", {"x", "w", "b"}, {"c"}, "conv", {{"pads", test::ints_attr({1, 1, 1, 1})}}));
  g.nodes.push_back(make_node("Relu", {"c"}, {"r"}, "relu"));
  g.nodes.push_back(make_node("Sigmoid", {"r"}, {"y"}, "sigmoid"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

TEST(CompilePipeline, FileBytesAndGraphGiveTheSameArtifact) {
  std::string dir = cat(std::filesystem::temp_directory_path().string(), "/fixpoint_pipeline_test_", getpid());
  std::filesystem::create_directories(dir);
  std::string path = dir + "/m.onnx";
  Graph g = small_graph();
  save_onnx(g, path);
  std::vector<std::map<std::string, Tensor>> calib;
  for (uint32_t i = 0; i < 3; ++i) calib.push_back({{"x", test::random_tensor({1, 2, 6, 6}, 40 + i)}});
  test::MemorySource src(calib);
  CompileOptions o;
  std::string from_file = test::artifact_bytes(compile_model(path, o, &src).program, dir + "/a");
  std::string from_bytes = test::artifact_bytes(compile_model_bytes(test::read_bytes(path), path, o, &src).program, dir + "/b");
  std::string from_graph = test::artifact_bytes(compile_graph(g, path, o, &src).program, dir + "/c");
  std::filesystem::remove_all(dir);
  ASSERT_GT(from_file.size(), 100u);
  EXPECT_EQ(from_file, from_bytes);
  EXPECT_EQ(from_file, from_graph);
}

TEST(CompilePipeline, InMemoryGraphRejectsShapeBindings) {
  CompileOptions o;
  o.bits = 32;
  o.shapes["x"] = {1, 2, 6, 6};
  try {
    compile_graph(small_graph(), "graph 'g'", o, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("graph 'g': --shape binds dims when a model is imported"), std::string::npos)
        << e.what();
  }
}

TEST(PrepareRegistry, EveryAcceleratorOpTypeHasAPrepareStep) {
  std::set<std::string> ops = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Concat",
                               "PRelu", "ReduceMean", "ReduceSum", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
                               "Softmax", "LayerNormalization", "InstanceNormalization", "Resize", "Upsample", "Pad"};
  ops.insert(kMoveOps.begin(), kMoveOps.end());
  ops.insert(kLutOps.begin(), kLutOps.end());
  for (const auto& op : ops) EXPECT_FALSE(prepare_steps(op).empty()) << op;
  // A constant B first, then two activations; linear Resize first, then nearest (data movement).
  ASSERT_EQ(prepare_steps("MatMul").size(), 2u);
  EXPECT_EQ(prepare_steps("MatMul")[0], &prepare_matmul_like);
  EXPECT_EQ(prepare_steps("MatMul")[1], &prepare_matmul2);
  ASSERT_EQ(prepare_steps("Resize").size(), 2u);
  EXPECT_EQ(prepare_steps("Resize")[0], &prepare_resize_linear);
  EXPECT_TRUE(prepare_steps("TopK").empty());
}

}  // namespace
}  // namespace fixpoint
