// Chains of element-wise nodes run as one kernel (src/kernels/float/pointwise_chain.cc): the
// same bits as the nodes run one by one (a run with on_node set never fuses) and as the
// reference kernels, at 1-3 threads, on seeded inputs holding NaN, +-Inf, +-0 and subnormals;
// fused only where every intermediate stays inside the chain, and declined (still right) for
// operands the chain does not handle.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "fixpoint/float_kernels.h"
#include "fixpoint/runtime.h"

namespace fixpoint {
namespace {

Node node(const std::string& op, std::vector<std::string> ins, const std::string& out) {
  Node n;
  n.name = out + "_node";
  n.op_type = op;
  n.inputs = std::move(ins);
  n.outputs = {out};
  n.opset = 13;
  return n;
}

Tensor scalar(float v, Shape s = {}) {
  Tensor t(DType::Float32, s);
  t.data<float>()[0] = v;
  return t;
}

Tensor special_input(std::mt19937& rng, const Shape& s) {
  Tensor t(DType::Float32, s);
  std::uniform_real_distribution<float> u(-8.0f, 8.0f);
  const float specials[] = {std::nanf(""), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 0.0f, -0.0f,
                            std::numeric_limits<float>::denorm_min(), -3.0f, 6.0f};
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = rng() % 16 == 0 ? specials[rng() % 8] : u(rng);
  return t;
}

// HardSwish between two affine steps (PaddleOCR's detector), then Sigmoid, a Sub reading the
// chain's input again, and Relu: y = Relu(Sigmoid(... ) - x).
Graph hardswish_chain() {
  Graph g;
  g.inputs.push_back(ValueInfo{"x", DType::Float32, std::nullopt});
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  g.initializers["s"] = scalar(0.94316906f, {1});
  g.initializers["b"] = scalar(0.5042972f, {1});
  g.initializers["three"] = scalar(3.0f);
  g.initializers["zero"] = scalar(0.0f);
  g.initializers["six"] = scalar(6.0f);
  g.nodes = {node("Mul", {"s", "x"}, "m"),        node("Add", {"m", "b"}, "a"),
             node("Add", {"a", "three"}, "a3"),   node("Clip", {"a3", "zero", "six"}, "c"),
             node("Mul", {"a", "c"}, "h"),        node("Div", {"h", "six"}, "hs"),
             node("Sigmoid", {"hs"}, "sg"),       node("Sub", {"sg", "x"}, "d"),
             node("Relu", {"d"}, "y")};
  return g;
}

void expect_same_bits(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  ASSERT_EQ(std::memcmp(a.data<float>(), b.data<float>(), static_cast<size_t>(a.numel()) * 4), 0) << what;
}

TEST(PointwiseChain, OneKernelWithTheBitsOfTheNodesAtAnyThreadCount) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    const Shape s = {2, 6, 40, 50 + static_cast<int64_t>(seed)};  // two 16384-element tasks and a tail
    Tensor x = special_input(rng, s);
    Graph g = hardswish_chain();
    RunOptions watch;
    watch.on_node = [](const Node&, const std::vector<Tensor>&) {};
    Tensor ref = Executor(g).run({{"x", x}}, watch).at("y");
    Executor unfused(g, fast_float_kernels());
    expect_same_bits(unfused.run({{"x", x}}, watch).at("y"), ref, "one by one, seed " + std::to_string(seed));
    EXPECT_EQ(unfused.fused_runs(), 0);
    for (int threads : {1, 2, 3}) {
      Executor ex(g, fast_float_kernels());
      RunOptions o;
      o.threads = threads;
      expect_same_bits(ex.run({{"x", x}}, o).at("y"), ref,
                       "fused, seed " + std::to_string(seed) + ", threads " + std::to_string(threads));
      EXPECT_EQ(ex.fused_runs(), 1) << "the nine nodes should run as one";
    }
  }
}

// An intermediate that is a graph output, or read after the chain, ends the chain before it: the
// nodes up to it fuse, the rest run (or fuse) after, and every output is right.
TEST(PointwiseChain, StopsWhereAnIntermediateIsReadOutside) {
  std::mt19937 rng(7);
  const Shape s = {1, 3, 20, 30};
  Tensor x = special_input(rng, s);
  Graph g = hardswish_chain();
  g.outputs.push_back(ValueInfo{"hs", DType::Float32, std::nullopt});  // HardSwish's output
  RunOptions watch;
  watch.on_node = [](const Node&, const std::vector<Tensor>&) {};
  auto ref = Executor(g).run({{"x", x}}, watch);
  Executor ex(g, fast_float_kernels());
  auto got = ex.run({{"x", x}});
  expect_same_bits(got.at("y"), ref.at("y"), "y");
  expect_same_bits(got.at("hs"), ref.at("hs"), "hs");
  EXPECT_EQ(ex.fused_runs(), 2);  // Mul .. Div, then Sigmoid .. Relu
}

// Operands the chain does not handle (a per-channel operand, a float64 chain) make it decline;
// the nodes then run one by one with their own kernels.
TEST(PointwiseChain, DeclinesBroadcastsAndOtherTypes) {
  std::mt19937 rng(11);
  const Shape s = {1, 4, 8, 9};
  Tensor x = special_input(rng, s);
  Graph g = hardswish_chain();
  Tensor per_channel(DType::Float32, {1, 4, 1, 1});
  for (int c = 0; c < 4; ++c) per_channel.data<float>()[c] = 0.5f + c;
  g.initializers["s"] = per_channel;
  RunOptions watch;
  watch.on_node = [](const Node&, const std::vector<Tensor>&) {};
  Tensor ref = Executor(g).run({{"x", x}}, watch).at("y");
  Executor ex(g, fast_float_kernels());
  expect_same_bits(ex.run({{"x", x}}).at("y"), ref, "per-channel operand");
  EXPECT_EQ(ex.fused_runs(), 0);

  Graph g64;
  g64.inputs.push_back(ValueInfo{"x", DType::Float64, std::nullopt});
  g64.outputs.push_back(ValueInfo{"y", DType::Float64, std::nullopt});
  g64.nodes = {node("Relu", {"x"}, "r"), node("Sigmoid", {"r"}, "y")};
  Tensor x64(DType::Float64, {3});
  x64.data<double>()[0] = -1.0, x64.data<double>()[1] = 0.5, x64.data<double>()[2] = 2.0;
  Executor ex64(g64, fast_float_kernels());
  Tensor y64 = ex64.run({{"x", x64}}).at("y");
  EXPECT_EQ(ex64.fused_runs(), 0);
  EXPECT_EQ(y64.data<double>()[0], 0.5);
  EXPECT_EQ(y64.data<double>()[2], 1.0 / (1.0 + std::exp(-2.0)));
}

// The affine and HardSwish runs a chain computes as one step each (match_macro in
// pointwise_chain.cc), in other operand orders, and near misses that must stay separate steps:
// a Mul by a second input instead of x, a scalar that is an input rather than a constant, a Div
// whose constant is the dividend. Every variant has the bits of its nodes run one by one.
TEST(PointwiseChain, GroupedRunsKeepTheBitsInEveryOperandOrder) {
  std::mt19937 rng(13);
  const Shape s = {1, 5, 30, 41};
  Tensor x = special_input(rng, s), z = special_input(rng, s), k = scalar(0.75f);
  auto variant = [](int v) {
    Graph g = hardswish_chain();
    g.inputs.push_back(ValueInfo{"z", DType::Float32, std::nullopt});
    g.inputs.push_back(ValueInfo{"k", DType::Float32, std::nullopt});
    if (v == 1) {  // operands swapped: Mul(x, s), Add(b, m), Add(three, a), Mul(c, a)
      g.nodes[0].inputs = {"x", "s"};
      g.nodes[1].inputs = {"b", "m"};
      g.nodes[2].inputs = {"three", "a"};
      g.nodes[4].inputs = {"c", "a"};
    } else if (v == 2) {  // the Mul reads z, not the Add's input: no HardSwish
      g.nodes[4].inputs = {"z", "c"};
    } else if (v == 3) {  // the affine scale is a graph input of one element: no affine step
      g.nodes[0].inputs = {"k", "x"};
    } else if (v == 4) {  // six / h: not HardSwish's Div
      g.nodes[5].inputs = {"six", "h"};
    }
    return g;
  };
  for (int v = 0; v <= 4; ++v) {
    Graph g = variant(v);
    RunOptions watch;
    watch.on_node = [](const Node&, const std::vector<Tensor>&) {};
    std::map<std::string, Tensor> in = {{"x", x}, {"z", z}, {"k", k}};
    Tensor ref = Executor(g).run(in, watch).at("y");
    for (int threads : {1, 2}) {
      Executor ex(g, fast_float_kernels());
      RunOptions o;
      o.threads = threads;
      expect_same_bits(ex.run(in, o).at("y"), ref, "variant " + std::to_string(v));
      EXPECT_EQ(ex.fused_runs(), 1) << "variant " << v;
    }
  }
}

}  // namespace
}  // namespace fixpoint
