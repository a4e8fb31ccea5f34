// A float Conv and the Relu reading its output run as one (fuse_conv_relu, src/kernels/float/
// conv_f32.cc): the same bits as the two nodes run one by one on the fast kernels (a run with
// on_node set never fuses; the fast conv against the reference is fast_float_test.cc's), at 1-3
// threads, on convolutions that take each of the conv's paths (phase planes in one K block,
// where the tiles apply Relu as they store; several K blocks, pointwise and depthwise, where
// Relu is a pass over the output), with NaN, +-Inf and +-0 among the inputs; not fused where
// another node reads the conv's output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "fixpoint/float_kernels.h"
#include "fixpoint/runtime.h"

namespace fixpoint {
namespace {

// Uniform in [-1, 1); with `specials`, one in 8 values of channel 0 is NaN, +-Inf or +-0 (only
// channel 0: every output of a deep conv would otherwise meet a NaN, and Relu would have
// nothing to clamp).
Tensor random_tensor(std::mt19937& rng, const Shape& s, bool specials) {
  Tensor t(DType::Float32, s);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float special[] = {std::nanf(""), std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), 0.0f, -0.0f};
  const int64_t plane = s.size() == 4 ? s[2] * s[3] : 1, row = s.size() == 4 ? s[1] * plane : 1;
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = specials && i % row < plane && rng() % 8 == 0 ? special[rng() % 5] : u(rng);
  return t;
}

// x -> Conv(w, b) -> c -> Relu -> y, and with `tap`, c is a graph output too.
Graph conv_relu(std::mt19937& rng, const Shape& w, int64_t group, int64_t stride, int64_t pad, bool tap) {
  Graph g;
  g.inputs.push_back(ValueInfo{"x", DType::Float32, std::nullopt});
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  if (tap) g.outputs.push_back(ValueInfo{"c", DType::Float32, std::nullopt});
  g.initializers["w"] = random_tensor(rng, w, false);
  g.initializers["b"] = random_tensor(rng, {w[0]}, false);
  Node conv;
  conv.name = "conv";
  conv.op_type = "Conv";
  conv.inputs = {"x", "w", "b"};
  conv.outputs = {"c"};
  conv.opset = 13;
  conv.attrs["group"] = Attribute::of_int(group);
  conv.attrs["strides"] = Attribute::of_ints({stride, stride});
  conv.attrs["pads"] = Attribute::of_ints({pad, pad, pad, pad});
  Node relu;
  relu.name = "relu";
  relu.op_type = "Relu";
  relu.inputs = {"c"};
  relu.outputs = {"y"};
  relu.opset = 13;
  g.nodes = {conv, relu};
  return g;
}

void expect_same_bits(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  ASSERT_EQ(std::memcmp(a.data<float>(), b.data<float>(), static_cast<size_t>(a.numel()) * 4), 0) << what;
}

TEST(ConvRelu, OneKernelWithTheBitsOfTheNodesOnEveryPath) {
  struct Layer {
    const char* what;
    Shape x, w;
    int64_t group, stride, pad;
  };
  const Layer layers[] = {
      {"3x3 phase planes, one K block", {2, 5, 13, 17}, {14, 5, 3, 3}, 1, 1, 1},
      {"7x7 stride 2, one K block", {1, 3, 30, 29}, {8, 3, 7, 7}, 1, 2, 3},
      {"3x3 past one K block", {1, 920, 5, 6}, {7, 920, 3, 3}, 1, 1, 1},
      {"1x1 pointwise", {2, 9, 7, 11}, {13, 9, 1, 1}, 1, 1, 0},
      {"3x3 depthwise", {1, 6, 9, 20}, {6, 1, 3, 3}, 6, 1, 1},
  };
  std::mt19937 rng(11);
  RunOptions watch;  // observes every node: nothing fuses
  watch.on_node = [](const Node&, const std::vector<Tensor>&) {};
  for (const Layer& l : layers) {
    Graph g = conv_relu(rng, l.w, l.group, l.stride, l.pad, false);
    Tensor x = random_tensor(rng, l.x, true);
    Executor ex(g, fast_float_kernels());
    Tensor ref = ex.run({{"x", x}}, watch).at("y");
    EXPECT_EQ(ex.fused_runs(), 0);
    int64_t clamped = 0, nonfinite = 0;  // Relu had values to clamp, and NaN or +Inf to keep
    for (int64_t i = 0; i < ref.numel(); ++i) nonfinite += !std::isfinite(ref.data<float>()[i]);
    for (int64_t i = 0; i < ref.numel(); ++i) clamped += ref.data<float>()[i] == 0.0f;
    for (int threads : {1, 2, 3}) {
      RunOptions o;
      o.threads = threads;
      expect_same_bits(ex.run({{"x", x}}, o).at("y"), ref, std::string(l.what) + ", fused, threads " + std::to_string(threads));
    }
    EXPECT_EQ(ex.fused_runs(), 3) << l.what;
    EXPECT_GT(clamped, ref.numel() / 8) << l.what;
    EXPECT_GT(nonfinite, 0) << l.what;
  }
}

TEST(ConvRelu, NotFusedWhereTheConvOutputIsReadElsewhere) {
  std::mt19937 rng(12);
  Graph g = conv_relu(rng, {4, 3, 3, 3}, 1, 1, 1, true);
  Tensor x = random_tensor(rng, {1, 3, 8, 8}, true);
  RunOptions watch;
  watch.on_node = [](const Node&, const std::vector<Tensor>&) {};
  Executor ex(g, fast_float_kernels());
  auto ref = ex.run({{"x", x}}, watch);
  auto got = ex.run({{"x", x}});
  expect_same_bits(got.at("y"), ref.at("y"), "y");
  expect_same_bits(got.at("c"), ref.at("c"), "c");
  EXPECT_EQ(ex.fused_runs(), 0);
}

}  // namespace
}  // namespace fixpoint
