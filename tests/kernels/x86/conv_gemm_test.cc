// The optimized 8-bit Conv / Gemm path (im2col + every ISA GEMM this CPU has) against the scalar
// reference kernels, bit for bit, on randomized seeded geometries, codes, zero points, weights,
// biases and multipliers. A failure prints the seed; FIXPOINT_TEST_SEED=S reruns one case.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "kernels/reference/integer/integer_kernels.h"
#include "kernels/x86/conv_gemm.h"
#include "test_util.h"

namespace fixpoint {
namespace {

using test::int_attr;
using test::ints_attr;
using test::make_node;

struct Case {
  QOp op;
  Tensor x;
  QParams qx, qy;
};

Tensor random_codes(DType t, const Shape& s, std::mt19937& rng) {
  Tensor r(t, s);
  fx::Range range = fx::range_of(t);
  std::uniform_int_distribution<int64_t> d(range.lo, range.hi);
  std::vector<int64_t> v(static_cast<size_t>(r.numel()));
  for (auto& e : v) e = d(rng);
  qref::store_codes(r, v);
  return r;
}

// Per-channel prepared constants. Half the layers are "wide" through a bias code beyond int32
// (a channel with near-zero weights): the GEMM still sums the products in int32 (§4 bound on K).
void prepare_channels(QOp& op, int64_t M, int64_t K, std::mt19937& rng, int64_t wmax) {
  bool wide = rng() % 2;
  int64_t bmax = wide ? int64_t{1} << 40 : int64_t{1} << 20;
  Tensor bias(DType::Int64, {M}), mult(DType::Int64, {M}), shift(DType::Int64, {M});
  std::uniform_int_distribution<int64_t> b(-bmax, bmax), m(1 << 14, (1 << 15) - 1), n(14, 24);
  for (int64_t c = 0; c < M; ++c) {
    bias.data<int64_t>()[c] = b(rng);
    mult.data<int64_t>()[c] = m(rng);
    shift.data<int64_t>()[c] = n(rng) + (wide ? 20 : 0);
  }
  op.consts["bias"] = bias;
  op.consts["mult"] = mult;
  op.consts["shift"] = shift;
  op.ints["wide"] = wide;
  op.ints["weight_bits"] = wmax <= 128 ? 8 : 16;
  ASSERT_LT(K * 255 * wmax, int64_t{1} << 31);
}

Tensor random_weights(const Shape& s, int64_t wmax, std::mt19937& rng) {
  Tensor w(DType::Int16, s);
  std::uniform_int_distribution<int64_t> d(-wmax, wmax), zero(0, 9);
  // Some exact zeros: the reference skips them, the GEMM multiplies them.
  for (int64_t i = 0; i < w.numel(); ++i) w.data<int16_t>()[i] = static_cast<int16_t>(zero(rng) ? d(rng) : 0);
  return w;
}

void set_output(Case& c, std::mt19937& rng) {
  c.qy.type = rng() % 2 ? DType::UInt8 : DType::Int8;
  fx::Range r = fx::range_of(c.qy.type);
  c.qy.zero_point = c.qy.type == DType::UInt8 ? static_cast<int64_t>(rng() % 40) : 0;
  c.op.ints["lo"] = r.lo;
  c.op.ints["hi"] = r.hi;
}

void set_input(Case& c, const Shape& s, std::mt19937& rng) {
  c.qx.type = rng() % 2 ? DType::UInt8 : DType::Int8;
  c.qx.zero_point = c.qx.type == DType::UInt8 ? static_cast<int64_t>(rng() % 128) : static_cast<int64_t>(rng() % 5) - 2;
  c.x = random_codes(c.qx.type, s, rng);
}

Case random_conv(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Case c;
  int64_t rank = pick(1, 3), N = pick(1, 2);
  bool depthwise = pick(0, 3) == 0;
  int64_t group = depthwise ? pick(2, 8) : pick(0, 2) == 0 ? 2 : 1;
  int64_t cg = depthwise ? 1 : pick(1, 9), mg = depthwise ? 1 : pick(1, 9);
  int64_t C = cg * group, M = mg * group;
  Shape xs = {N, C}, ws = {M, cg};
  std::vector<int64_t> strides, dil, pads(2 * rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t k = rank == 3 ? pick(1, 3) : pick(1, 5);
    ws.push_back(k);
    strides.push_back(pick(1, 2));
    dil.push_back(pick(1, 2));
    pads[i] = pick(0, k / 2 + 1);
    pads[i + rank] = pick(0, k / 2);
    xs.push_back((rank == 3 ? pick(1, 4) : pick(1, 10)) + (k - 1) * dil.back());
  }
  c.op.kind = "conv";
  c.op.node = make_node("Conv", {"x"}, {"y"}, cat("conv_seed_", seed),
                        {{"group", int_attr(group)}, {"strides", ints_attr(strides)},
                         {"dilations", ints_attr(dil)}, {"pads", ints_attr(pads)}});
  int64_t wmax = pick(0, 1) ? 127 : 300;  // 8-bit weights, or wider values that still fit int32 (§4)
  c.op.consts["weight"] = random_weights(ws, wmax, rng);
  int64_t K = cg;
  for (size_t i = 2; i < ws.size(); ++i) K *= ws[i];
  prepare_channels(c.op, M, K, rng, wmax);
  set_input(c, xs, rng);
  set_output(c, rng);
  return c;
}

Case random_matmul(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Case c;
  int64_t K = pick(1, 300), N = pick(1, 40);
  Shape xs = {pick(1, 3), pick(1, 150), K};
  c.op.kind = "matmul";
  c.op.node = make_node("MatMul", {"x"}, {"y"}, cat("matmul_seed_", seed));
  c.op.consts["weight"] = random_weights({N, K}, 127, rng);
  prepare_channels(c.op, N, K, rng, 127);
  set_input(c, xs, rng);
  set_output(c, rng);
  return c;
}

Tensor run(Case& c, int threads, const xk::GemmS16Kernel* k) {
  std::vector<Tensor> out(1);
  qref::QContext ctx{c.op, {&c.x}, {c.qx}, {c.qy}, out, threads};
  if (k) {
    EXPECT_TRUE(xk::gemm_path_applies(ctx)) << c.op.node.label();
  }
  if (!k) {
    qref::find_integer_kernel(c.op.kind)(ctx);
  } else if (c.op.kind == "conv") {
    xk::conv_s8_gemm(ctx, *k);
  } else {
    xk::matmul_s8_gemm(ctx, *k);
  }
  return out[0];
}

std::vector<uint32_t> seeds(uint32_t first, int n) {
  if (const char* s = std::getenv("FIXPOINT_TEST_SEED")) return {static_cast<uint32_t>(std::strtoul(s, nullptr, 10))};
  std::vector<uint32_t> r;
  for (int i = 0; i < n; ++i) r.push_back(first + i);
  return r;
}

void expect_same_codes(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(shape_str(want.shape()), shape_str(got.shape())) << what;
  std::vector<int64_t> a = qref::load_codes(want, 0), b = qref::load_codes(got, 0);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << what << " at flat index " << i;
}

TEST(GemmS16, EveryAvailableIsaMatchesReferenceConvBitExactly) {
  auto kernels = xk::available_gemm_s16();
  for (const auto* k : kernels) std::printf("[ isa ] %s\n", k->name);
  for (uint32_t seed : seeds(1000, 150)) {
    Case c = random_conv(seed);
    Tensor want = run(c, 1, nullptr);
    for (const auto* k : kernels)
      for (int threads : {1, 2})
        expect_same_codes(want, run(c, threads, k), cat(k->name, " threads=", threads, " seed=", seed, " ", c.op.node.label()));
  }
}

TEST(GemmS16, EveryAvailableIsaMatchesReferenceMatMulBitExactly) {
  auto kernels = xk::available_gemm_s16();
  for (uint32_t seed : seeds(5000, 80)) {
    Case c = random_matmul(seed);
    Tensor want = run(c, 1, nullptr);
    for (const auto* k : kernels)
      for (int threads : {1, 2})
        expect_same_codes(want, run(c, threads, k), cat(k->name, " threads=", threads, " seed=", seed));
  }
}

TEST(GemmS16, DispatchPicksTheWidestIsaTheCpuReports) {
  auto kernels = xk::available_gemm_s16();
  ASSERT_FALSE(kernels.empty());
  EXPECT_STREQ(kernels.front()->isa, "scalar");
  if (!std::getenv("FIXPOINT_ISA")) {
    EXPECT_EQ(xk::selected_isa(), kernels.back()->isa);
  }
  if (__builtin_cpu_supports("avx2")) {
    EXPECT_NE(xk::gemm_s16_for("avx2"), nullptr);
  }
  EXPECT_EQ(xk::gemm_s16_for("sse9"), nullptr);
}

}  // namespace
}  // namespace fixpoint
