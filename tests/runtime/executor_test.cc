#include <gtest/gtest.h>

#include "fixpoint/runtime.h"
#include "test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

// A residual chain long enough for buffers to be recycled several times.
Graph residual_chain(int blocks) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {-1, 2, 6, 6}));
  std::string cur = "x";
  for (int i = 0; i < blocks; ++i) {
    std::string w = cat("w", i), c = cat("c", i), r = cat("r", i), a = cat("a", i);
    g.initializers[w] = test::random_tensor({2, 2, 3, 3}, 100 + i, -0.5f, 0.5f);
    g.nodes.push_back(make_node("Conv", {cur, w}, {c}, cat("conv", i), {{"pads", test::ints_attr({1, 1, 1, 1})}}));
    g.nodes.push_back(make_node("Relu", {c}, {r}, cat("relu", i)));
    g.nodes.push_back(make_node("Add", {r, cur}, {a}, cat("add", i)));
    cur = a;
  }
  g.nodes.push_back(make_node("Identity", {cur}, {"y"}, "out"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

TEST(Executor, BufferReuseChangesNoBit) {
  Graph g = residual_chain(6);
  Tensor x = test::random_tensor({3, 2, 6, 6}, 7);
  Executor ex(g);
  RunOptions keep;
  keep.keep_all = true;
  Tensor pooled = ex.run({{"x", x}}).at("y");
  Tensor kept = ex.run({{"x", x}}, keep).at("y");
  Tensor again = ex.run({{"x", x}}).at("y");
  EXPECT_TRUE(bit_equal(pooled, kept));
  EXPECT_TRUE(bit_equal(pooled, again));
}

TEST(Executor, BatchRowsMatchSingleRowRuns) {
  Executor ex(residual_chain(3));
  Tensor x = test::random_tensor({4, 2, 6, 6}, 8);
  Tensor y = ex.run({{"x", x}}).at("y");
  for (int64_t r = 0; r < 4; ++r)
    EXPECT_TRUE(bit_equal(test::row(y, r), ex.run({{"x", test::row(x, r)}}).at("y"))) << "row " << r;
}

TEST(Executor, OnNodeCallbackSeesEveryNodeInOrder) {
  Executor ex(residual_chain(2));
  std::vector<std::string> seen;
  RunOptions o;
  o.on_node = [&](const Node& n, const std::vector<Tensor>& outs) {
    seen.push_back(n.name);
    EXPECT_EQ(outs.size(), 1u);
  };
  ex.run({{"x", test::random_tensor({1, 2, 6, 6}, 1)}}, o);
  EXPECT_EQ(seen, (std::vector<std::string>{"conv0", "relu0", "add0", "conv1", "relu1", "add1", "out"}));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Executor, InputErrorsNameTheInput) {
  Executor ex(residual_chain(1));
  EXPECT_NE(error_of([&] { ex.run({}); }).find("missing input 'x'"), std::string::npos);
  Tensor wrong_dtype(DType::Int32, {1, 2, 6, 6});
  EXPECT_NE(error_of([&] { ex.run({{"x", wrong_dtype}}); }).find("int32"), std::string::npos);
  EXPECT_NE(error_of([&] { ex.run({{"x", test::random_tensor({1, 3, 6, 6}, 1)}}); }).find("1x3x6x6"), std::string::npos);
  EXPECT_NE(error_of([&] { ex.run({{"x", test::random_tensor({1, 2, 6, 6}, 1)}, {"z", Tensor()}}); }).find("'z'"),
            std::string::npos);
}

TEST(Executor, UnsupportedOpIsReportedAtConstruction) {
  Graph g;
  g.inputs.push_back(test::input_info("x", {2}));
  g.nodes.push_back(make_node("NonMaxSuppression", {"x"}, {"y"}, "nms"));
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  std::string msg = error_of([&] { Executor ex(g); });
  EXPECT_NE(msg.find("'nms'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not supported"), std::string::npos) << msg;
}

}  // namespace
}  // namespace fixpoint
