// The fast float path (src/kernels/float) against the float reference kernels on randomized,
// seeded Conv, ConvTranspose, MatMul, Gemm and elementwise cases. A failure prints the seed;
// FIXPOINT_TEST_SEED=S reruns one case. For each case and every microkernel table this CPU has:
//  * within the summation bound of the reference: both compute sum_k w_k x_k (+ b) in float, the
//    reference multiplying and adding (one rounding each), the fast path in one fma chain (F1),
//    so each differs from the exact sum by at most (K + 2) u sum_k |w_k x_k| + u |b| (u = 2^-24,
//    Higham's gamma_K bound) and from each other by twice that; sum |w x| + |b| is the reference
//    kernel run on |x|, |w|, |b|. NaN exactly where the reference has NaN;
//  * the same bits on every table, at 1, 2 and 3 threads, and for each batch row run alone;
//  * elementwise ops: the reference's bits (one IEEE operation per element on both paths).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "fixpoint/runtime.h"
#include "kernels/float/f32_kernels.h"
#include "kernels/float/fast_float_ops.h"
#include "kernels/reference/unary_ops.h"

namespace fixpoint {
namespace {

using Prepare = std::unique_ptr<PreparedKernel> (*)(const Node&, const Graph&, const fk::F32Kernels*);

std::vector<const fk::F32Kernels*> tables() {
  int n = 0;
  const fk::F32Kernels* const* t = fk::available_f32_kernels(&n);
  return {t, t + n};
}

struct Case {
  std::string name;
  Node node;
  Graph graph;                   // the constants (weights, bias)
  std::vector<std::string> ins;  // node inputs fed at run time
  std::vector<Tensor> values;    // their values
  int64_t K = 1;                 // products per output element (for the bound)
  size_t batched = 1;            // leading values that carry the batch dim
};

Tensor random_tensor(std::mt19937& rng, const Shape& s, bool nan = false) {
  Tensor t(DType::Float32, s);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  if (nan && t.numel()) t.data<float>()[rng() % t.numel()] = std::nanf("");
  return t;
}

Tensor abs_of(const Tensor& t) {
  Tensor r = t.clone();
  for (int64_t i = 0; i < r.numel(); ++i) r.data<float>()[i] = std::fabs(r.data<float>()[i]);
  return r;
}

std::vector<const Tensor*> inputs_of(const Case& c, const std::vector<Tensor>& values, bool abs_consts,
                                     std::vector<Tensor>& keep) {
  keep.clear();
  keep.reserve(c.node.inputs.size());
  std::vector<const Tensor*> r;
  for (const auto& in : c.node.inputs) {
    if (in.empty()) {
      r.push_back(nullptr);
      continue;
    }
    auto it = std::find(c.ins.begin(), c.ins.end(), in);
    const Tensor& v = it != c.ins.end() ? values[it - c.ins.begin()] : c.graph.initializers.at(in);
    keep.push_back(abs_consts ? abs_of(v) : v);
    r.push_back(&keep.back());
  }
  return r;
}

Tensor run_reference(const Case& c, const std::vector<Tensor>& values, bool abs_all = false) {
  std::vector<Tensor> keep;
  return run_node(c.node, inputs_of(c, values, abs_all, keep)).at(0);
}

Tensor run_fast(const PreparedKernel& k, const Case& c, const std::vector<Tensor>& values, int threads) {
  std::vector<Tensor> keep, outs(1);
  KernelContext ctx(c.node, inputs_of(c, values, false, keep), outs, nullptr);
  ctx.threads = threads;
  EXPECT_TRUE(k.run(ctx)) << c.name << ": the fast kernel declined";
  return outs[0];
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// Row n of a batch-major tensor.
Tensor batch_row(const Tensor& t, int64_t n) {
  Shape s = t.shape();
  s[0] = 1;
  Tensor r(DType::Float32, s);
  std::memcpy(r.raw(), t.data<float>() + n * r.numel(), r.nbytes());
  return r;
}

void check(const Case& c, Prepare prepare, bool batch_rows = true) {
  SCOPED_TRACE(c.name);
  Tensor ref = run_reference(c, c.values);
  std::vector<Tensor> abs_values;
  for (const auto& v : c.values) abs_values.push_back(abs_of(v));
  Tensor bound = run_reference(c, abs_values, true);
  const double u = std::ldexp(1.0, -24);
  Tensor first;
  for (const fk::F32Kernels* table : tables()) {
    auto k = prepare(c.node, c.graph, table);
    ASSERT_TRUE(k) << c.name << ": not prepared";
    Tensor y = run_fast(*k, c, c.values, 1);
    ASSERT_EQ(y.shape(), ref.shape());
    for (int64_t i = 0; i < y.numel(); ++i) {
      float f = y.data<float>()[i], r = ref.data<float>()[i];
      if (std::isnan(r)) {
        ASSERT_TRUE(std::isnan(f)) << table->isa << " element " << i << ": " << f << ", reference NaN";
        continue;
      }
      double tol = 2.0 * (c.K + 2) * u * bound.data<float>()[i] + 1e-37;
      ASSERT_LE(std::fabs(static_cast<double>(f) - r), tol) << table->isa << " element " << i << ": " << f << " vs " << r;
    }
    if (first.numel() == 0 && y.numel()) first = y;
    EXPECT_TRUE(same_bits(y, first)) << table->isa << " differs from " << tables()[0]->isa;
    for (int threads : {2, 3}) EXPECT_TRUE(same_bits(run_fast(*k, c, c.values, threads), y)) << threads << " threads";
    if (!batch_rows || c.values[0].dim(0) < 2) continue;
    for (int64_t n = 0; n < c.values[0].dim(0); ++n) {
      std::vector<Tensor> one = c.values;
      for (size_t i = 0; i < c.batched; ++i) one[i] = batch_row(c.values[i], n);
      EXPECT_TRUE(same_bits(run_fast(*k, c, one, 1), batch_row(y, n))) << "batch row " << n << " alone";
    }
  }
}

uint32_t seed_base(uint32_t base) {
  const char* s = std::getenv("FIXPOINT_TEST_SEED");
  return s ? static_cast<uint32_t>(std::strtoul(s, nullptr, 10)) : base;
}

template <typename Make>
void for_seeds(uint32_t base, int count, Make make, Prepare prepare) {
  bool one = std::getenv("FIXPOINT_TEST_SEED") != nullptr;
  for (int i = 0; i < (one ? 1 : count); ++i) {
    uint32_t seed = seed_base(base) + (one ? 0 : i);
    check(make(seed), prepare);
    if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) {
      std::printf("failing seed: FIXPOINT_TEST_SEED=%u\n", seed);
      return;
    }
  }
}

// A case's node: named after the case, reading `inputs`, writing y.
Node& start_node(Case& c, const std::string& op, std::vector<std::string> inputs) {
  c.node.name = c.name;
  c.node.op_type = op;
  c.node.inputs = std::move(inputs);
  c.node.outputs = {"y"};
  return c.node;
}

// A sliding window's attributes (Conv, ConvTranspose).
void set_window(Node& n, int64_t group, std::vector<int64_t> strides, std::vector<int64_t> dilations,
                std::vector<int64_t> pads) {
  n.attrs["group"] = Attribute::of_int(group);
  n.attrs["strides"] = Attribute::of_ints(std::move(strides));
  n.attrs["dilations"] = Attribute::of_ints(std::move(dilations));
  n.attrs["pads"] = Attribute::of_ints(std::move(pads));
}

Case random_conv(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Case c;
  c.name = cat("conv_seed_", seed);
  int64_t rank = pick(1, 3);
  bool depthwise = pick(0, 3) == 0, pointwise = pick(0, 4) == 0;
  int64_t group = depthwise ? pick(2, 8) : pick(0, 2) == 0 ? 2 : 1;
  int64_t cg = depthwise ? 1 : pick(1, 12), mg = depthwise ? 1 : pick(1, 20);
  Shape x = {pick(1, 3), cg * group}, w = {mg * group, cg};
  std::vector<int64_t> strides, dil, pads(2 * rank), kernel;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t k = pointwise ? 1 : rank == 3 ? pick(1, 3) : pick(1, 5);
    kernel.push_back(k);
    strides.push_back(pointwise ? 1 : pick(1, 2));
    dil.push_back(pointwise ? 1 : pick(1, 2));
    pads[i] = pointwise ? 0 : pick(0, k / 2 + 1);
    pads[i + rank] = pointwise ? 0 : pick(0, k / 2);
    x.push_back((rank == 3 ? pick(1, 5) : rank == 2 ? pick(1, 24) : pick(1, 60)) + (k - 1) * dil.back());
    w.push_back(k);
  }
  start_node(c, "Conv", {"x", "w"});
  set_window(c.node, group, strides, dil, pads);
  c.graph.initializers["w"] = random_tensor(rng, w);
  if (pick(0, 2)) {
    c.node.inputs.push_back("b");
    c.graph.initializers["b"] = random_tensor(rng, {w[0]});
  }
  c.ins = {"x"};
  c.values = {random_tensor(rng, x, pick(0, 4) == 0)};
  c.K = cg;
  for (int64_t k : kernel) c.K *= k;
  return c;
}

Case random_conv_transpose(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Case c;
  c.name = cat("conv_transpose_seed_", seed);
  int64_t rank = pick(1, 2), group = pick(0, 2) == 0 ? 2 : 1, cg = pick(1, 8), mg = pick(1, 7);
  Shape x = {pick(1, 3), cg * group}, w = {cg * group, mg};
  std::vector<int64_t> strides, dil, pads(2 * rank), opad;
  c.K = cg;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t k = pick(1, 4), s = pick(1, 3);
    w.push_back(k);
    strides.push_back(s);
    dil.push_back(pick(1, 2));
    pads[i] = pick(0, k - 1);
    pads[i + rank] = pick(0, k - 1);
    opad.push_back(pick(0, s - 1));
    x.push_back(rank == 2 ? pick(1, 12) : pick(1, 40));
    c.K *= k;
  }
  start_node(c, "ConvTranspose", {"x", "w"});
  set_window(c.node, group, strides, dil, pads);
  c.node.attrs["output_padding"] = Attribute::of_ints(opad);
  c.graph.initializers["w"] = random_tensor(rng, w);
  if (pick(0, 1)) {
    c.node.inputs.push_back("b");
    c.graph.initializers["b"] = random_tensor(rng, {mg * group});
  }
  c.ins = {"x"};
  c.values = {random_tensor(rng, x, pick(0, 4) == 0)};
  return c;
}

Case random_matmul(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Case c;
  c.name = cat("matmul_seed_", seed);
  int64_t M = pick(1, 30), K = pick(1, 300), N = pick(1, 70);
  Shape a = {pick(1, 3)};
  if (pick(0, 1)) a.push_back(pick(1, 3));
  a.push_back(M);
  a.push_back(K);
  start_node(c, "MatMul", {"a", "b"});
  c.ins = {"a"};
  c.values = {random_tensor(rng, a, pick(0, 4) == 0)};
  if (pick(0, 1)) {  // constant weights, packed at prepare
    c.graph.initializers["b"] = random_tensor(rng, {K, N});
  } else {  // a second activation: the same batch dims, or 2-D
    Shape b = pick(0, 1) ? Shape(a.begin(), a.end() - 2) : Shape{};
    if (!b.empty()) c.batched = 2;
    b.push_back(K);
    b.push_back(N);
    c.ins.push_back("b");
    c.values.push_back(random_tensor(rng, b));
  }
  c.K = K;
  return c;
}

Case random_gemm(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Case c;
  c.name = cat("gemm_seed_", seed);
  int64_t M = pick(1, 20), K = pick(1, 400), N = pick(1, 90);
  bool tb = pick(0, 1);
  start_node(c, "Gemm", {"a", "b"});
  c.node.attrs["transB"] = Attribute::of_int(tb);
  c.graph.initializers["b"] = random_tensor(rng, tb ? Shape{N, K} : Shape{K, N});
  if (pick(0, 2)) {
    c.node.inputs.push_back("c");
    c.graph.initializers["c"] = random_tensor(rng, pick(0, 1) ? Shape{N} : Shape{1, N});
    if (pick(0, 1)) c.node.attrs["beta"] = Attribute::of_float(0.5f);
  }
  c.ins = {"a"};
  c.values = {random_tensor(rng, {M, K}, pick(0, 4) == 0)};
  c.K = K;
  return c;
}

TEST(FastFloat, ConvWithinTheSummationBoundAndTheSameBitsOnEveryTableThreadCountAndBatch) {
  for_seeds(1000, 150, random_conv, fk::prepare_conv_f32);
}

TEST(FastFloat, ConvTransposeWithinTheSummationBoundAndTheSameBitsOnEveryTableThreadCountAndBatch) {
  for_seeds(2000, 100, random_conv_transpose, fk::prepare_conv_transpose_f32);
}

TEST(FastFloat, MatMulWithinTheSummationBoundAndTheSameBitsOnEveryTableThreadCountAndBatch) {
  for_seeds(3000, 100, random_matmul, fk::prepare_matmul_f32);
}

TEST(FastFloat, GemmWithinTheSummationBoundAndTheSameBitsOnEveryTableAndThreadCount) {
  for_seeds(4000, 80, random_gemm, fk::prepare_gemm_f32);
}

// A 3x3 conv with padding 1 and a bias: M output channels over a batch of two C x H x W inputs.
void check_conv3x3(const std::string& name, uint32_t seed, int64_t M, int64_t C, int64_t H, int64_t W) {
  std::mt19937 rng(seed);
  Case c;
  c.name = name;
  start_node(c, "Conv", {"x", "w", "b"});
  c.node.attrs["pads"] = Attribute::of_ints({1, 1, 1, 1});
  c.graph.initializers["w"] = random_tensor(rng, {M, C, 3, 3});
  c.graph.initializers["b"] = random_tensor(rng, {M});
  c.ins = {"x"};
  c.values = {random_tensor(rng, {2, C, H, W})};
  c.K = C * 9;
  check(c, fk::prepare_conv_f32);
}

// A large layer: many panels and column blocks.
TEST(FastFloat, LargeConvSpansManyBlocks) { check_conv3x3("conv3x3_64x64_40x40", 7, 64, 64, 40, 40); }

// K past one block (8,192): every chain continued across the K blocks (the first 8,192 k, then
// 88), with the bias after the last, through the tile buffer instead of the direct store.
TEST(FastFloat, DeepConvSpansTwoKBlocks) { check_conv3x3("conv3x3_920x14_7x7", 8, 14, 920, 7, 7); }

// Depthwise rows wide enough for the four-vector blocks, at strides 1, 2 (the shuffled load) and 3.
TEST(FastFloat, WideDepthwiseRowsAtEveryStride) {
  for (int64_t s : {1, 2, 3}) {
    std::mt19937 rng(static_cast<uint32_t>(11 + s));
    Case c;
    c.name = cat("depthwise3x3_stride", s);
    set_window(start_node(c, "Conv", {"x", "w", "b"}), 4, {s, s}, {1, 1}, {1, 1, 1, 1});
    c.graph.initializers["w"] = random_tensor(rng, {4, 1, 3, 3});
    c.graph.initializers["b"] = random_tensor(rng, {4});
    c.ins = {"x"};
    c.values = {random_tensor(rng, {2, 4, 7, 141}, true)};
    c.K = 9;
    check(c, fk::prepare_conv_f32);
  }
}

// Depthwise planes are zero-padded only for finite weights: an Inf tap over the padding is
// skipped (as the reference skips it), never multiplied by 0 into NaN.
TEST(FastFloat, DepthwisePaddingSkipsInfiniteTaps) {
  Case c;
  c.name = "depthwise3x3_inf_weight";
  set_window(start_node(c, "Conv", {"x", "w"}), 2, {1, 1}, {1, 1}, {1, 1, 1, 1});
  Tensor w(DType::Float32, {2, 1, 3, 3});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = 0.5f;
  w.data<float>()[0] = std::numeric_limits<float>::infinity();  // channel 0, tap (0, 0)
  c.graph.initializers["w"] = w;
  Tensor x(DType::Float32, {1, 2, 5, 21});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 1.0f;
  c.ins = {"x"};
  c.values = {x};
  Tensor ref = run_reference(c, c.values);
  for (const fk::F32Kernels* table : tables()) {
    Tensor y = run_fast(*fk::prepare_conv_f32(c.node, c.graph, table), c, c.values, 1);
    ASSERT_TRUE(same_bits(y, ref)) << table->isa;  // small integers and Inf: exact on every path
  }
  EXPECT_EQ(ref.data<float>()[0], 2.0f);  // (0, 0): its Inf tap lies in the padding
  EXPECT_TRUE(std::isinf(ref.data<float>()[21 + 1]));
}

// Elementwise: the reference's bits for every broadcast the fast path takes.
TEST(FastFloat, ElementwiseGivesTheReferenceBits) {
  KernelRegistry r;
  fk::register_elementwise_f32(r);
  uint32_t base = seed_base(5000);
  int taken = 0;
  for (uint32_t seed = base; seed < base + 400; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const char* ops[] = {"Add", "Sub", "Mul", "Div"};
    Node n;
    n.name = cat("binary_seed_", seed);
    n.op_type = ops[pick(0, 3)];
    n.inputs = {"a", "b"};
    n.outputs = {"y"};
    Shape full;
    for (int64_t d = pick(1, 4); d > 0; --d) full.push_back(pick(1, 6));
    Shape part = full;
    for (auto& d : part)
      if (pick(0, 1)) d = 1;  // any pattern: some the fast path declines
    while (!part.empty() && pick(0, 2) == 0) part.erase(part.begin());
    bool swap = pick(0, 1);
    Tensor a = random_tensor(rng, swap ? part : full, pick(0, 4) == 0), b = random_tensor(rng, swap ? full : part);
    std::vector<const Tensor*> ins = {&a, &b};
    Tensor ref = run_node(n, ins).at(0);
    auto k = r.find_prepared(n.op_type, "")(n, Graph{});
    std::vector<Tensor> outs(1);
    KernelContext ctx(n, ins, outs, nullptr);
    ctx.threads = 2;
    if (!k->run(ctx)) continue;
    ++taken;
    ASSERT_TRUE(outs[0].shape() == ref.shape()) << n.name;
    for (int64_t i = 0; i < ref.numel(); ++i) {
      float x = outs[0].data<float>()[i], y = ref.data<float>()[i];
      ASSERT_TRUE(std::memcmp(&x, &y, 4) == 0 || (std::isnan(x) && std::isnan(y)))
          << n.name << " element " << i << ": " << x << " vs " << y << " (FIXPOINT_TEST_SEED=" << seed << ")";
    }
  }
  EXPECT_GT(taken, 200);
}

// The registry's prepared kernel for n gives the reference kernel's bytes (shape and every byte)
// at 1, 2 and 3 threads.
void expect_reference_bytes(const KernelRegistry& r, const Node& n, const std::vector<const Tensor*>& ins,
                            uint32_t seed) {
  Tensor ref = run_node(n, ins).at(0);
  auto k = r.find_prepared(n.op_type, "")(n, Graph{});
  for (int threads : {1, 2, 3}) {
    std::vector<Tensor> outs(1);
    KernelContext ctx(n, ins, outs, nullptr);
    ctx.threads = threads;
    ASSERT_TRUE(k->run(ctx)) << n.name;
    ASSERT_TRUE(outs[0].shape() == ref.shape()) << n.name;
    ASSERT_EQ(std::memcmp(outs[0].raw(), ref.raw(), ref.nbytes()), 0)
        << n.name << " threads " << threads << " (FIXPOINT_TEST_SEED=" << seed << ")";
  }
}

// Relu, Sigmoid, Tanh, Clip: the reference's bits on tensors of up to several 16384-element tasks at
// 1-3 threads, with NaNs, signed zeros, infinities and values past exp()'s range; Clip with the
// opset-6 attributes and the opset-13 inputs (either bound absent).
TEST(FastFloat, UnaryOpsGiveTheReferenceBits) {
  KernelRegistry r;
  fk::register_unary_f32(r);
  uint32_t base = seed_base(7000);
  const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, std::nanf(""), 100.0f, -100.0f, 1e-30f};
  for (uint32_t seed = base; seed < base + 80; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const char* ops[] = {"Relu", "Sigmoid", "Clip", "Tanh"};
    Node n;
    n.name = cat("unary_seed_", seed);
    n.op_type = ops[seed % 4];
    n.inputs = {"x"};
    n.outputs = {"y"};
    n.opset = 13;
    Tensor x = random_tensor(rng, {pick(1, 3), pick(1, 40000)});
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (pick(0, 9) == 0) x.data<float>()[i] = special[pick(0, 7)];
      else x.data<float>()[i] *= 8.0f;
    }
    Tensor lo(DType::Float32, {}), hi(DType::Float32, {});
    lo.data<float>()[0] = -1.5f;
    hi.data<float>()[0] = 3.0f;
    std::vector<const Tensor*> ins = {&x};
    if (n.op_type == "Clip") {
      if (seed / 4 % 2) {  // opset 6: attributes
        n.opset = 6;
        if (pick(0, 2)) n.attrs["min"] = Attribute::of_float(-1.5f);
        if (pick(0, 2)) n.attrs["max"] = Attribute::of_float(3.0f);
      } else {
        bool has_lo = pick(0, 2), has_hi = pick(0, 2);
        n.inputs = {"x", has_lo ? "lo" : "", has_hi ? "hi" : ""};
        ins = {&x, has_lo ? &lo : nullptr, has_hi ? &hi : nullptr};
      }
    }
    ASSERT_NO_FATAL_FAILURE(expect_reference_bytes(r, n, ins, seed));
  }
}

// Every table's Tanh row gives ref::tanh_f32's bits (U1): rows of any length (vector tails),
// values around both branch points (2^-13, 9.5), tiny, subnormal, signed zeros, infinities, NaN.
TEST(FastFloat, TanhRowsGiveTheReferenceBits) {
  uint32_t base = seed_base(7500);
  const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, std::nanf(""), 9.5f, -9.5f, 0x1p-13f, -0x1p-13f,
                           std::nextafter(9.5f, 0.0f), std::nextafter(0x1p-13f, 0.0f), 1e-40f, 88.0f, 0.3465736f};
  for (uint32_t seed = base; seed < base + 40; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> wide(-12.0f, 12.0f), expo(-24.0f, 4.0f);
    const int64_t n = std::uniform_int_distribution<int64_t>(1, 3000)(rng);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) {
      switch (rng() % 4) {
        case 0: v = special[rng() % std::size(special)]; break;
        case 1: v = std::copysign(std::exp2(expo(rng)), wide(rng)); break;  // |x| from 2^-24 to 16
        default: v = wide(rng);
      }
    }
    for (const fk::F32Kernels* k : tables()) {
      std::vector<float> y(static_cast<size_t>(n) + 1, 7.0f);  // one past the row: untouched
      k->tanh(x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const float want = ref::tanh_f32(x[static_cast<size_t>(i)]), got = y[static_cast<size_t>(i)];
        ASSERT_EQ(std::memcmp(&want, &got, 4), 0) << k->isa << " x = " << x[static_cast<size_t>(i)] << ": " << got
                                                  << " vs " << want << " (FIXPOINT_TEST_SEED=" << seed << ")";
      }
      ASSERT_EQ(y[static_cast<size_t>(n)], 7.0f) << k->isa << " wrote past the row (FIXPOINT_TEST_SEED=" << seed << ")";
    }
  }
}

// (U1) against tanh in double on every 61st float from 2^-14 to 10 and their negatives: within
// one ulp everywhere, and the correctly rounded float on all but a few.
TEST(FastFloat, TanhWithinOneUlp) {
  int64_t count = 0, off = 0;
  uint32_t from, to;
  const float lo = 0x1p-14f, hi = 10.0f;
  std::memcpy(&from, &lo, 4);
  std::memcpy(&to, &hi, 4);
  for (uint32_t b = from; b < to; b += 61)
    for (float sign : {1.0f, -1.0f}) {
      float x;
      std::memcpy(&x, &b, 4);
      x *= sign;
      const float got = ref::tanh_f32(x), want = static_cast<float>(std::tanh(static_cast<double>(x)));
      ++count;
      if (got == want) continue;
      ++off;
      ASSERT_EQ(std::nextafter(want, got), got) << "x = " << x << ": " << got << " vs " << want;
    }
  EXPECT_GT(count, 1000000);
  EXPECT_LT(off, count / 10000) << off << " of " << count << " not correctly rounded";
}

// Softmax and LogSoftmax: the reference's bits along any axis (inner > 1), opset 13 and the
// flattening opset 11, with NaNs, infinities and signed zeros in some rows, at 1-3 threads.
TEST(FastFloat, SoftmaxGivesTheReferenceBits) {
  KernelRegistry r;
  fk::register_softmax_f32(r);
  uint32_t base = seed_base(8000);
  const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, std::nanf(""), 80.0f, -80.0f};
  for (uint32_t seed = base; seed < base + 40; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    Node n;
    n.name = cat("softmax_seed_", seed);
    n.op_type = seed % 2 ? "Softmax" : "LogSoftmax";
    n.inputs = {"x"};
    n.outputs = {"y"};
    n.opset = seed % 5 == 0 ? 11 : 13;
    n.attrs["axis"] = Attribute::of_int(pick(0, 2));
    Tensor x = random_tensor(rng, {pick(1, 4), seed % 3 ? pick(1, 9) : pick(500, 7000), pick(1, 3)});
    for (int64_t i = 0; i < x.numel(); ++i) {
      x.data<float>()[i] *= 10.0f;
      if (pick(0, 199) == 0) x.data<float>()[i] = special[pick(0, 6)];
    }
    std::vector<const Tensor*> ins = {&x};
    ASSERT_NO_FATAL_FAILURE(expect_reference_bytes(r, n, ins, seed));
  }
}

// LayerNormalization: the reference's bits on 2-D to 4-D inputs, any axis, scale and bias of the
// normalized shape or broadcast to it (bias absent in a third of the cases), rows of up to 3,000
// values with NaNs, infinities and signed zeros, at 1-3 threads.
TEST(FastFloat, LayerNormGivesTheReferenceBits) {
  KernelRegistry r;
  fk::register_layernorm_f32(r);
  uint32_t base = seed_base(8500);
  const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, std::nanf(""), 1e30f, -1e-30f};
  for (uint32_t seed = base; seed < base + 40; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    Shape s = {pick(1, 3), seed % 4 ? pick(1, 9) : pick(200, 3000)};
    for (int64_t d = pick(0, 2); d > 0; --d) s.push_back(pick(1, 7));
    const int64_t rank = static_cast<int64_t>(s.size()), axis = pick(-rank, rank - 1);
    Node n;
    n.name = cat("layernorm_seed_", seed);
    n.op_type = "LayerNormalization";
    n.opset = 17;
    n.attrs["axis"] = Attribute::of_int(axis);
    if (seed % 2) n.attrs["epsilon"] = Attribute::of_float(seed % 3 ? 1e-3f : 0.0f);
    Tensor x = random_tensor(rng, s);
    for (int64_t i = 0; i < x.numel(); ++i)
      if (pick(0, 149) == 0) x.data<float>()[i] = special[pick(0, 6)];
    // The normalized shape, its leading dims dropped or set to 1 at random (broadcasts).
    Shape norm(s.begin() + (axis < 0 ? axis + rank : axis), s.end());
    auto param_shape = [&] {
      Shape p = norm;
      if (pick(0, 2) == 0) p.erase(p.begin(), p.begin() + pick(0, static_cast<int64_t>(p.size()) - 1));
      for (int64_t& d : p)
        if (pick(0, 3) == 0) d = 1;
      return p;
    };
    Tensor scale = random_tensor(rng, param_shape()), bias = random_tensor(rng, param_shape());
    n.inputs = {"x", "scale"};
    std::vector<const Tensor*> ins = {&x, &scale};
    if (seed % 3) {
      n.inputs.push_back("b");
      ins.push_back(&bias);
    }
    n.outputs = {"y"};
    ASSERT_NO_FATAL_FAILURE(expect_reference_bytes(r, n, ins, seed));
  }
}

// Resize / Upsample with nearest (copying) geometry: the reference's bits on 3-D and 4-D float
// inputs with NaNs and on 8/16/32-bit codes, up- and downsampling by integer and fractional factors (given as scales or sizes),
// every coordinate transformation and nearest mode, at 1-3 threads.
TEST(FastFloat, NearestResizeGivesTheReferenceBits) {
  KernelRegistry r;
  fk::register_resize_copy(r);
  uint32_t base = seed_base(8700);
  const char* coords[] = {"asymmetric", "half_pixel", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn"};
  const char* modes[] = {"floor", "round_prefer_floor", "round_prefer_ceil", "ceil"};
  for (uint32_t seed = base; seed < base + 40; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    Shape s = {pick(1, 2), pick(1, 5)};
    for (int64_t d = pick(1, 2); d > 0; --d) s.push_back(pick(1, 40));
    Tensor x = random_tensor(rng, s);
    for (int64_t i = 0; i < x.numel(); i += pick(1, 300)) x.data<float>()[i] = std::nanf("");
    const bool upsample = seed % 5 == 0;
    Node n;
    n.name = cat("resize_seed_", seed);
    n.op_type = upsample ? "Upsample" : "Resize";
    n.opset = upsample ? 9 : 13;
    n.outputs = {"y"};
    // Per axis: x 1 (batch, channels), else x 2, x 3, / 2 or x 1.5 (scales), or a size.
    std::vector<float> scales;
    std::vector<int64_t> sizes;
    for (size_t d = 0; d < s.size(); ++d) {
      const float f[] = {2.0f, 3.0f, 0.5f, 1.5f, 1.0f};
      scales.push_back(d < 2 ? 1.0f : f[pick(0, 4)]);
      sizes.push_back(d < 2 ? s[d] : pick(1, 2 * s[d] + 3));
    }
    Tensor sc = Tensor::from_f32(scales, {static_cast<int64_t>(scales.size())});
    Tensor sz = Tensor::from_i64(sizes, {static_cast<int64_t>(sizes.size())});
    std::vector<const Tensor*> ins = {&x};
    if (upsample) {
      n.inputs = {"x", "scales"};
      ins.push_back(&sc);
    } else {
      n.attrs["coordinate_transformation_mode"] = Attribute::of_string(coords[pick(0, 4)]);
      n.attrs["nearest_mode"] = Attribute::of_string(modes[pick(0, 3)]);
      if (seed % 2) {
        n.inputs = {"x", "", "scales"};
        ins.insert(ins.end(), {nullptr, &sc});
      } else {
        n.inputs = {"x", "", "", "sizes"};
        ins.insert(ins.end(), {nullptr, nullptr, &sz});
      }
    }
    ASSERT_NO_FATAL_FAILURE(expect_reference_bytes(r, n, ins, seed));
    // The same geometry on integer codes (a fixed-point program's Resize is a move op on them).
    const DType code_types[] = {DType::Int8, DType::UInt8, DType::Int16, DType::UInt16, DType::Int32};
    Tensor codes(code_types[seed % 5], s);
    for (int64_t i = 0; i < codes.numel(); ++i) codes.set_f64(i, static_cast<double>(pick(-100, 100) + 100 * (seed % 2)));
    ins[0] = &codes;
    ASSERT_NO_FATAL_FAILURE(expect_reference_bytes(r, n, ins, seed));
  }
}

// AveragePool: the reference's bits on 1-D to 3-D windows (3-D to 5-D inputs) with strides,
// pads, ceil_mode and count_include_pad, inputs with NaNs, infinities and signed zeros, at 1-3
// threads.
TEST(FastFloat, AveragePoolGivesTheReferenceBits) {
  KernelRegistry r;
  fk::register_avgpool_f32(r);
  uint32_t base = seed_base(8800);
  const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, std::nanf(""), 1e30f, -1e-30f};
  for (uint32_t seed = base; seed < base + 40; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int64_t dims = pick(1, 3);
    Shape s = {pick(1, 2), pick(1, 6)};
    std::vector<int64_t> kernel, strides, pads(static_cast<size_t>(2 * dims));
    for (int64_t d = 0; d < dims; ++d) {
      s.push_back(pick(3, dims == 3 ? 9 : 30));
      kernel.push_back(pick(1, 3));
      strides.push_back(pick(1, 2));
      pads[static_cast<size_t>(d)] = pick(0, kernel.back() - 1);
      pads[static_cast<size_t>(d + dims)] = pick(0, kernel.back() - 1);
    }
    Tensor x = random_tensor(rng, s);
    for (int64_t i = 0; i < x.numel(); ++i)
      if (pick(0, 149) == 0) x.data<float>()[i] = special[pick(0, 6)];
    Node n;
    n.name = cat("avgpool_seed_", seed);
    n.op_type = "AveragePool";
    n.opset = 11;
    n.inputs = {"x"};
    n.outputs = {"y"};
    n.attrs["kernel_shape"] = Attribute::of_ints(kernel);
    n.attrs["strides"] = Attribute::of_ints(strides);
    n.attrs["pads"] = Attribute::of_ints(pads);
    n.attrs["ceil_mode"] = Attribute::of_int(seed % 3 == 0);
    n.attrs["count_include_pad"] = Attribute::of_int(seed % 2);
    std::vector<const Tensor*> ins = {&x};
    ASSERT_NO_FATAL_FAILURE(expect_reference_bytes(r, n, ins, seed));
  }
}

// BatchNormalization (inference) and GlobalAveragePool: the reference's bits on 2-D to 5-D
// inputs with NaNs, infinities and signed zeros, per-channel constants with zero and tiny
// variances, at 1-3 threads.
TEST(FastFloat, BatchNormAndGlobalAveragePoolGiveTheReferenceBits) {
  KernelRegistry r;
  fk::register_batchnorm_f32(r);
  fk::register_global_avgpool_f32(r);
  uint32_t base = seed_base(9000);
  const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, std::nanf(""), 1e30f, -1e-30f};
  for (uint32_t seed = base; seed < base + 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    Shape s = {pick(1, 3), pick(1, 9)};
    for (int64_t d = pick(0, 3); d > 0; --d) s.push_back(pick(1, seed % 4 == 0 ? 60 : 9));
    Tensor x = random_tensor(rng, s);
    for (int64_t i = 0; i < x.numel(); ++i)
      if (pick(0, 99) == 0) x.data<float>()[i] = special[pick(0, 6)];
    Node n;
    n.outputs = {"y"};
    n.opset = seed % 3 ? 15 : 9;
    std::vector<Tensor> consts;
    if (seed % 2) {
      n.name = cat("batchnorm_seed_", seed);
      n.op_type = "BatchNormalization";
      n.inputs = {"x", "s", "b", "m", "v"};
      n.attrs["epsilon"] = Attribute::of_float(seed % 5 ? 1e-5f : 1e-3f);
      for (int k = 0; k < 4; ++k) consts.push_back(random_tensor(rng, {s[1]}));
      for (int64_t ch = 0; ch < s[1]; ++ch) {
        float& v = consts[3].data<float>()[ch];
        v = ch % 3 == 0 ? 0.0f : std::fabs(v) * (ch % 3 == 1 ? 1e-6f : 3.0f);
      }
    } else {
      n.name = cat("gap_seed_", seed);
      n.op_type = "GlobalAveragePool";
      n.inputs = {"x"};
    }
    std::vector<const Tensor*> ins = {&x};
    for (const auto& t : consts) ins.push_back(&t);
    ASSERT_NO_FATAL_FAILURE(expect_reference_bytes(r, n, ins, seed));
  }
}

// The executor uses a prepared kernel where the registry has one and the reference elsewhere;
// a kernel that declines (here: float64) falls back to the reference.
TEST(FastFloat, ExecutorFallsBackWhereThePreparedKernelDeclines) {
  int n = 0;
  const fk::F32Kernels* const* t = fk::available_f32_kernels(&n);
  Graph g;
  g.inputs.push_back(ValueInfo{"a", DType::Float64, std::nullopt});
  g.outputs.push_back(ValueInfo{"y", DType::Float64, std::nullopt});
  Node mm;
  mm.name = "mm";
  mm.op_type = "MatMul";
  mm.inputs = {"a", "b"};
  mm.outputs = {"y"};
  g.nodes.push_back(mm);
  Tensor b(DType::Float64, {3, 2});
  for (int i = 0; i < 6; ++i) b.data<double>()[i] = i;
  g.initializers["b"] = b;
  KernelRegistry r = KernelRegistry::reference();
  static const fk::F32Kernels* table = t[n - 1];
  r.add_prepared("MatMul", [](const Node& node, const Graph& graph) { return fk::prepare_matmul_f32(node, graph, table); });
  Tensor a(DType::Float64, {2, 3});
  for (int i = 0; i < 6; ++i) a.data<double>()[i] = 1;
  auto y = Executor(g, r).run({{"a", a}}).at("y");
  ASSERT_EQ(y.dtype(), DType::Float64);
  EXPECT_EQ(y.data<double>()[0], 0 + 2 + 4);
  EXPECT_EQ(y.data<double>()[3], 1 + 3 + 5);
}

}  // namespace
}  // namespace fixpoint
