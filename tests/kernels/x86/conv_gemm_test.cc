// The optimized 8-bit Conv / Gemm path (im2col + every ISA GEMM this CPU has) against the scalar
// reference kernels, bit for bit, on randomized seeded geometries, codes, zero points, weights,
// biases and multipliers. A failure prints the seed; FIXPOINT_TEST_SEED=S reruns one case.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <map>
#include <random>

#include "kernels/reference/integer/integer_kernels.h"
#include "kernels/x86/conv_gemm.h"
#include "fixpoint/cpu_isa.h"
#include "integer_layer_cases.h"

namespace fixpoint {
namespace {

using test::Case;

// The input extent along spatial axis i that reaches n window starts (n: one past the last
// window's first input index, the stride applied by the caller).
int64_t reach(const test::ConvSpec& s, size_t i, int64_t n) { return n + (s.kernel[i] - 1) * s.dilations[i]; }

// The head of a depthwise spec: `groups` groups of one input and one output channel, `batch` rows.
test::ConvSpec depthwise_head(int64_t groups, int64_t batch) {
  test::ConvSpec s;
  s.group = groups;
  s.x = {batch, groups};
  s.M = groups;
  return s;
}

Case random_conv_x(uint32_t seed, bool x16) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int64_t rank = pick(1, 3);
  bool depthwise = pick(0, 3) == 0;
  test::ConvSpec spec;
  spec.group = depthwise ? pick(2, 8) : pick(0, 2) == 0 ? 2 : 1;
  int64_t cg = depthwise ? 1 : pick(1, 9), mg = depthwise ? 1 : pick(1, 9);
  spec.x = {pick(1, 2), cg * spec.group};
  spec.M = mg * spec.group;
  spec.pads.resize(2 * rank);
  bool pointwise = pick(0, 4) == 0;  // 1x1, stride 1, no padding: the transposing im2col
  for (int64_t i = 0; i < rank; ++i) {
    int64_t k = pointwise ? 1 : rank == 3 ? pick(1, 3) : pick(1, 5);
    spec.kernel.push_back(k);
    spec.strides.push_back(pointwise ? 1 : pick(1, 2));
    spec.dilations.push_back(pick(1, 2));
    spec.pads[i] = pointwise ? 0 : pick(0, k / 2 + 1);
    spec.pads[i + rank] = pointwise ? 0 : pick(0, k / 2);
    spec.x.push_back(reach(spec, static_cast<size_t>(i), rank == 3 ? pick(1, 4) : pick(1, 10)));
  }
  // 8-bit weights, or wider values that still fit int32 (§4); 16-bit layers: 16-bit weights too
  int64_t wmax = x16 ? (pick(0, 2) ? 32767 : 127) : pick(0, 1) ? 127 : 300;
  Case c = test::make_conv_case(spec, cat(x16 ? "conv16_seed_" : "conv_seed_", seed), rng, wmax, x16);
  return c;
}

Case random_conv(uint32_t seed) { return random_conv_x(seed, false); }

// A 2-D 8-bit conv with rows long enough for the vector im2col (16 output columns at a time):
// widths 16-90, stride 1 (sometimes 2, the scalar im2col), dilations, pads, channel counts that
// leave a partial quad of columns past K.
Case random_wide_conv(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  test::ConvSpec spec;
  spec.group = pick(0, 3) == 0 ? 2 : 1;
  spec.x = {1, pick(1, 5) * spec.group};
  spec.M = pick(1, 8) * spec.group;
  for (int i = 0; i < 2; ++i) {
    int64_t k = pick(1, 5);
    spec.kernel.push_back(k);
    spec.strides.push_back(pick(0, 4) == 0 ? 2 : 1);
    spec.dilations.push_back(pick(1, 2));
  }
  spec.pads = {pick(0, 2), pick(0, 3), pick(0, 2), pick(0, 3)};
  spec.x.push_back(reach(spec, 0, pick(1, 6)));
  spec.x.push_back(reach(spec, 1, pick(16, 90)));
  return test::make_conv_case(spec, cat("wide_conv_seed_", seed), rng, 127, false);
}
Case random_conv16(uint32_t seed) { return random_conv_x(seed, true); }

// A 2-D depthwise conv with rows of 16-90 output columns (several of the row kernel's 16-column
// steps, and the last one partial) at strides 1-3, 8- or 16-bit codes (w8: 16-bit codes, int8
// taps, a --params8 layer).
Case wide_depthwise(uint32_t seed, bool w8) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int64_t groups = pick(1, 6);
  test::ConvSpec spec = depthwise_head(groups, pick(1, 2));
  for (int i = 0; i < 2; ++i) {
    int64_t k = pick(1, 5);
    spec.kernel.push_back(k);
    spec.strides.push_back(pick(1, 3));
    spec.dilations.push_back(pick(1, 2));
  }
  spec.pads = {pick(0, 2), pick(0, 3), pick(0, 2), pick(0, 3)};
  spec.x.push_back(reach(spec, 0, pick(1, 6)));
  spec.x.push_back(reach(spec, 1, pick(16, 90) * spec.strides[1]));
  bool x16 = w8 || pick(0, 1);
  return test::make_conv_case(spec, cat("wide_depthwise_seed_", seed), rng, x16 && !w8 ? 32767 : 127, x16);
}
Case random_wide_depthwise(uint32_t seed) { return wide_depthwise(seed, false); }
Case random_depthwise16_w8(uint32_t seed) { return wide_depthwise(seed, true); }

// A 2-D 16-bit conv deep enough that the pairs kernel (conv_implicit_s16) sums several int32
// blocks of k (16-bit weights: 256 k per block): 20-70 input channels, 3x3 to 5x5 windows,
// strides, dilations, pads, groups; 16-bit weights near full scale (or 8-bit ones, one block).
// wide: 32-100 output channels, one group (the VNNI pixel form's layers); shallow: 1-3 input
// channels (with 8-bit weights, few enough k for an int32 accumulator: a non-wide layer).
Case deep_conv16(uint32_t seed, int64_t wmax, bool wide = false, bool shallow = false) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  test::ConvSpec spec;
  spec.group = pick(0, 3) == 0 && !wide ? 2 : 1;
  spec.x = {pick(1, 2), shallow ? pick(1, 3) : pick(20, 70) * spec.group};
  spec.M = wide ? pick(32, 100) : pick(1, 14) * spec.group;
  for (int i = 0; i < 2; ++i) {
    int64_t k = pick(3, 5);
    spec.kernel.push_back(k);
    spec.strides.push_back(pick(1, 2));
    spec.dilations.push_back(pick(1, 2));
    spec.x.push_back(reach(spec, static_cast<size_t>(i), pick(1, 12)));
  }
  spec.pads = {pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)};
  if (wmax == 0) wmax = pick(0, 3) ? 32767 : 127;
  return test::make_conv_case(spec, cat("deep_conv16_w", wmax > 127 ? 16 : 8, "_seed_", seed), rng, wmax, true);
}
Case random_deep_conv16(uint32_t seed) { return deep_conv16(seed, 0); }

Case random_conv_transpose_x(uint32_t seed, bool x16) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int64_t rank = pick(1, 2);
  test::ConvSpec spec;
  spec.group = pick(0, 2) == 0 ? 2 : 1;
  spec.x = {pick(1, 2), pick(1, 6) * spec.group};
  spec.M = pick(1, 5) * spec.group;
  spec.pads.resize(2 * rank);
  std::vector<int64_t> opad;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t k = pick(1, 4);
    spec.kernel.push_back(k);
    spec.strides.push_back(pick(1, 3));
    spec.dilations.push_back(pick(1, 2));
    spec.pads[i] = pick(0, k / 2);
    spec.pads[i + rank] = pick(0, k / 2);
    opad.push_back(pick(0, spec.strides.back() - 1));  // must stay below the stride
    spec.x.push_back(pick(1, 9));
  }
  // 16-bit: 16-bit codes with 16- or 8-bit weights (byte planes, int64 cols), like the 16-bit
  // programs' upsampling heads.
  if (x16) return test::make_conv_transpose_case(spec, cat("deconv16_seed_", seed), rng, opad, pick(0, 2) ? 32767 : 127, true);
  return test::make_conv_transpose_case(spec, cat("deconv_seed_", seed), rng, opad);
}
Case random_conv_transpose(uint32_t seed) { return random_conv_transpose_x(seed, false); }

// A ConvTranspose whose kernel tiles the output (kernel = stride 1-3 per axis, no pads, output
// padding or dilation: the OCR detector's 2x2 stride-2 upsampling), 8-bit codes and int8 weights
// (or 16-bit codes with 16- or 8-bit weights: the 16-bit detector's heads), 1-32 input channels,
// groups, input rows of up to 70 pixels (several 64-pixel tasks).
Case random_tiled_conv_transpose_x(uint32_t seed, bool x16) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int64_t rank = pick(1, 2);
  test::ConvSpec spec;
  spec.group = pick(0, 3) == 0 ? 2 : 1;
  spec.x = {pick(1, 2), pick(1, 16) * spec.group};
  spec.M = pick(1, 9) * spec.group;
  spec.pads.assign(2 * rank, 0);
  std::vector<int64_t> opad(static_cast<size_t>(rank), 0);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t k = pick(1, 3);
    spec.kernel.push_back(k);
    spec.strides.push_back(k);
    spec.dilations.push_back(1);
    spec.x.push_back(pick(1, i + 1 == rank ? 70 : 9));
  }
  if (x16) return test::make_conv_transpose_case(spec, cat("tiled_deconv16_seed_", seed), rng, opad, pick(0, 2) ? 32767 : 127, true);
  return test::make_conv_transpose_case(spec, cat("tiled_deconv_seed_", seed), rng, opad);
}
Case random_tiled_conv_transpose(uint32_t seed) { return random_tiled_conv_transpose_x(seed, false); }
Case random_tiled_conv_transpose16(uint32_t seed) { return random_tiled_conv_transpose_x(seed, true); }
Case random_conv_transpose16(uint32_t seed) { return random_conv_transpose_x(seed, true); }

Case random_matmul(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int64_t K = pick(1, 300), N = pick(1, 40);
  Shape xs = {pick(1, 3), pick(1, 150), K};
  if (seed % 4 == 0) {  // few rows, many channels: tasks split the channels (a classifier head)
    N = pick(128, 500);
    xs = {1, pick(1, 70), K};
  }
  return test::make_matmul_case(xs, N, cat("matmul_seed_", seed), rng);
}

// A 16-bit Gemm/MatMul layer (byte planes): 16-bit codes, 16-bit or 8-bit weights (w8: always
// 8-bit, and half the time a classifier head of 100-400 channels), K up to 3000.
Case matmul16(uint32_t seed, bool w8) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int64_t K = pick(1, 3000), N = w8 && seed % 2 ? pick(100, 400) : pick(1, 24);
  Shape xs = {pick(1, 2), pick(1, 40), K};
  return test::make_matmul_case(xs, N, cat("matmul16_seed_", seed), rng, w8 || !pick(0, 2) ? 127 : 32767, true);
}
Case random_matmul16(uint32_t seed) { return matmul16(seed, false); }
Case random_matmul16_w8(uint32_t seed) { return matmul16(seed, true); }

// The layer on the reference kernel (isa empty) or on `isa`'s optimized path: Conv and MatMul
// with their weights packed as the runtime packs them (the u8 x s8 GEMM for 8-bit codes and
// int8 weights, the int16 GEMM otherwise), ConvTranspose on the int16 GEMM or the tiled u8 x s8
// path, both with its rows packed at load (as the runtime does) and packed per call (the same
// codes, checked here).
Tensor run(Case& c, int threads, const std::string& isa, std::string* kernel = nullptr, bool amx = false) {
  std::vector<Tensor> out(1);
  qref::QContext ctx{c.op, {&c.x}, {c.qx}, {c.qy}, out, threads};
  if (isa.empty()) {
    qref::find_integer_kernel(std::string(c.op.kind()))(ctx);
  } else if (c.op.is<params::ConvTranspose>()) {
    EXPECT_TRUE(xk::gemm_path_applies(ctx)) << c.op.node.label();
    xk::run_conv_transpose(ctx, isa);
    if (auto pw = xk::pack_weights(c.op, c.qx.type, isa)) {
      std::vector<Tensor> at_load(1);
      qref::QContext lctx{c.op, {&c.x}, {c.qx}, {c.qy}, at_load, threads};
      xk::run_packed(lctx, *pw);
      EXPECT_EQ(qref::load_codes(out[0], 0), qref::load_codes(at_load[0], 0)) << "packed at load: " << c.op.node.label();
    }
  } else {
    auto pw = xk::pack_weights(c.op, c.qx.type, isa, amx);
    EXPECT_TRUE(pw) << c.op.node.label();
    if (!pw) return out[0];
    if (kernel) *kernel = pw->kernel_name();
    xk::run_packed(ctx, *pw);
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

// Every ISA kernel this CPU has, at 1 and 2 threads, gives the reference codes on `count`
// random layers from `make` (seeds first, first + 1, ...).
// Returns how many layers ran on each kernel.
std::map<std::string, int> check_every_isa(Case (*make)(uint32_t), uint32_t first, int count) {
  std::map<std::string, int> used;
  for (uint32_t seed : seeds(first, count)) {
    Case c = make(seed);
    Tensor want = run(c, 1, "");
    for (const auto* k : xk::available_gemm_s16())
      for (int threads : {1, 2}) {
        std::string kernel = k->name;
        Tensor got = run(c, threads, k->isa, &kernel);
        expect_same_codes(want, got, cat(kernel, " threads=", threads, " seed=", seed, " ", c.op.node.label()));
        if (threads == 1) ++used[kernel];
      }
  }
  return used;
}

TEST(GemmS16, EveryAvailableIsaMatchesReferenceConvBitExactly) {
  for (const auto& [kernel, n] : check_every_isa(random_conv, 1000, 150)) std::printf("[ kernel ] %s: %d layers\n", kernel.c_str(), n);
}

// Both GEMMs are exercised on every ISA: the u8 x s8 one (8-bit codes, int8 weights) and the
// int16 one (wider weights, depthwise).
TEST(GemmS16, EveryIsaRunsBothGemmsOnEightBitLayers) {
  if (std::getenv("FIXPOINT_TEST_SEED")) GTEST_SKIP() << "needs the whole seed range";
  std::map<std::string, int> used = check_every_isa(random_conv, 1000, 40);
  for (const auto* k : xk::available_gemm_s16()) {
    EXPECT_GT(used[cat("gemm_u8s8s32_", k->isa)], 0) << k->isa;
    EXPECT_GT(used[k->name], 0) << k->isa;
  }
}

// A 2-D 8-bit depthwise conv of column stride 2 and dilation 1 (the VNNI row kernel's plane of
// even-column pairs), with every output one unit per unit of sum (m 2^-n = 1, int16 output
// codes, small biases): a pair off by one input code changes an output code.
Case stride_two_depthwise(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int64_t groups = pick(1, 4);
  test::ConvSpec spec = depthwise_head(groups, pick(1, 2));
  spec.kernel = {pick(1, 5), pick(1, 6)};
  spec.strides = {pick(1, 2), 2};
  spec.dilations = {pick(1, 2), 1};
  spec.pads = {pick(0, 2), pick(0, 3), pick(0, 2), pick(0, 3)};
  spec.x.push_back(reach(spec, 0, pick(1, 6)));
  spec.x.push_back(pick(8, 90) * 2 + spec.kernel[1] - 1 + pick(0, 1));
  Case c = test::make_conv_case(spec, cat("stride2_depthwise_seed_", seed), rng, 127, false);
  auto& p = c.op.as<params::Conv>();
  p.wide = false;
  for (int64_t m = 0; m < spec.M; ++m) {
    p.bias.data<int64_t>()[m] = pick(-1000, 1000);
    p.mult.data<int64_t>()[m] = int64_t{1} << 14;
    p.shift.data<int64_t>()[m] = 14;
  }
  c.qy.type = DType::Int16;
  c.qy.zero_point = 0;
  p.lo = -32768;
  p.hi = 32767;
  return c;
}

// A 2-D 8-bit depthwise conv with int8 taps at both ends of their range (-128 and 127 among
// them) and input zero points at the ends of theirs (uint8 0 or 255, int8 -128 or 127): the VNNI
// row kernel's plane of quads of shifted codes (padding z_u) and its z_u sum w term. Row lengths
// of 1-13 taps (one to four quads), column strides 1-3, dilations 1-3.
Case int8_tap_depthwise(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int64_t groups = pick(1, 4);
  test::ConvSpec spec = depthwise_head(groups, pick(1, 2));
  spec.kernel = {pick(1, 5), pick(1, 13)};
  spec.strides = {pick(1, 2), pick(1, 3)};
  spec.dilations = {pick(1, 2), pick(1, 3)};
  spec.pads = {pick(0, 2), pick(0, 6), pick(0, 2), pick(0, 6)};
  spec.x.push_back(reach(spec, 0, pick(1, 6)));
  spec.x.push_back(reach(spec, 1, pick(1, 90) * spec.strides[1]));
  Case c = test::make_conv_case(spec, cat("int8_tap_depthwise_seed_", seed), rng, 127, false);
  auto& p = c.op.as<params::Conv>();
  int8_t* w = p.weight.data<int8_t>();
  for (int64_t i = 0; i < p.weight.numel(); ++i)
    if (pick(0, 3) == 0) w[i] = pick(0, 1) ? -128 : 127;
  const bool u8 = c.qx.type == DType::UInt8;
  c.qx.zero_point = u8 ? (pick(0, 1) ? 255 : 0) : (pick(0, 1) ? 127 : -128);
  return c;
}

TEST(GemmS16, Int8TapDepthwiseMatchesReferenceAtTheEndsOfTheRanges) { check_every_isa(int8_tap_depthwise, 23000, 60); }

TEST(GemmS16, StrideTwoDepthwiseMatchesReferenceOnEvenColumnPairs) { check_every_isa(stride_two_depthwise, 22000, 40); }

// A 2-D 8-bit conv with 48-100 output channels and a position count that does not split evenly
// into the implicit GEMM's chunks of 64 over two threads: the tasks are then split by channel
// block, one a thread (conv_implicit.cc, ImplicitTasks), which must not change a code.
Case many_channel_conv(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  test::ConvSpec spec;
  spec.group = 1;
  const bool pointwise = pick(0, 1);
  const int64_t k = pointwise ? 1 : 3;
  spec.x = {1, pick(1, 20)};
  spec.M = pick(48, 100);
  spec.kernel = {k, k};
  spec.strides = {1, 1};
  spec.dilations = {1, 1};
  spec.pads = pointwise ? std::vector<int64_t>{0, 0, 0, 0} : std::vector<int64_t>{1, 1, 1, 1};
  spec.x.push_back(pick(2, 12));
  spec.x.push_back(pick(20, 90));
  return test::make_conv_case(spec, cat("many_channel_conv_seed_", seed), rng, 127, false);
}

// A third of the time, c's output codes 16-bit (int16, or uint16 with a zero point) over their
// whole range: the epilogues' 16-bit stores.
void sometimes_16bit_output(Case& c, std::mt19937& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  if (pick(0, 2) != 0) return;
  c.qy.type = pick(0, 1) ? DType::Int16 : DType::UInt16;
  c.qy.zero_point = c.qy.type == DType::UInt16 ? pick(0, 300) : 0;
  fx::Range r = fx::range_of(c.qy.type);
  auto& p = c.op.as<params::Conv>();
  p.lo = r.lo;
  p.hi = r.hi;
}

// A 2-D 8-bit conv of 32-200 output channels (multiples of 16 and not) and a window wider than
// 1x1: the u8 x s8 kernel's pixel form on AVX-512 VNNI (channels along the vector, only the valid
// output positions, the transposing epilogue; tiles of 6 positions by 64 rows, of 8 by 48, 12 by
// 32 below 64 channels, and their tails), at strides 1-3, dilations, pads, 1-24 input channels,
// 8-bit outputs or (a third of the time) 16-bit ones, half the layers wide (the scalar epilogue's
// path; below 64 channels, the quads form).
Case pixel_form_conv(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  test::ConvSpec spec;
  spec.x = {pick(1, 2), pick(1, 24)};
  spec.M = pick(0, 2) ? pick(2, 12) * 16 : pick(32, 200);
  spec.pads.resize(4);
  for (size_t i = 0; i < 2; ++i) {
    int64_t k = pick(1, 7);
    if (i == 1 && spec.kernel[0] == 1 && k == 1) k = 3;
    spec.kernel.push_back(k);
    spec.strides.push_back(pick(1, 3));
    spec.dilations.push_back(pick(1, 2));
    spec.pads[i] = pick(0, k / 2 + 1);
    spec.pads[i + 2] = pick(0, k / 2);
    spec.x.push_back(reach(spec, i, pick(1, 30) * spec.strides[i]));
  }
  Case c = test::make_conv_case(spec, cat("pixel_form_conv_seed_", seed), rng, 127, false);
  sometimes_16bit_output(c, rng);
  return c;
}

TEST(GemmS16, PixelFormMatchesReference) {
  std::map<std::string, int> used = check_every_isa(pixel_form_conv, 27000, 40);
  if (xk::gemm_u8s8_for("avx512vnni") && !std::getenv("FIXPOINT_TEST_SEED")) {
    EXPECT_GT(used["gemm_u8s8s32_6px64c_avx512vnni"], 20);
  }
  for (const auto& [kernel, n] : used) std::printf("[ kernel ] %s: %d layers\n", kernel.c_str(), n);
}

// A 16-bit depthwise conv of 256 taps at -32768 each: the one case where a byte plane's int32
// sum could reach 2^31 (2^8 sum |w| = 2^31), so the layer keeps the int64 row kernel instead of
// the byte planes on vpdpwssd; and one of 255 such taps, which takes the byte planes.
Case full_scale_depthwise16(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int64_t groups = pick(1, 3);
  test::ConvSpec spec = depthwise_head(groups, 1);
  const bool all = seed % 2 == 0;
  spec.kernel = all ? std::vector<int64_t>{16, 16} : std::vector<int64_t>{15, 17};
  spec.strides = {1, pick(1, 2)};
  spec.dilations = {1, 1};
  spec.pads = {pick(0, 8), pick(0, 8), pick(0, 8), pick(0, 8)};
  spec.x.push_back(pick(16, 20));
  spec.x.push_back(pick(16, 40) + 16);
  Case c = test::make_conv_case(spec, cat("full_scale_depthwise16_seed_", seed), rng, 32767, true);
  auto& p = c.op.as<params::Conv>();
  for (int64_t i = 0; i < p.weight.numel(); ++i) p.weight.set_f64(i, -32768.0);
  return c;
}

// A 16-bit 2-D depthwise conv of 25-49 taps at column stride 1 (the byte planes on the pairs
// rows): random 16-bit codes with zero points, 8- or 16-bit weights, row strides, dilations, pads.
Case wide_window_depthwise16(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int64_t groups = pick(1, 4);
  test::ConvSpec spec = depthwise_head(groups, pick(1, 2));
  spec.kernel = {pick(5, 7), pick(5, 7)};
  spec.strides = {pick(1, 2), 1};
  spec.dilations = {pick(1, 2), pick(1, 2)};
  spec.pads = {pick(0, 3), pick(0, 4), pick(0, 3), pick(0, 4)};
  spec.x.push_back(reach(spec, 0, pick(1, 6)));
  spec.x.push_back(reach(spec, 1, pick(1, 90)));
  return test::make_conv_case(spec, cat("wide_window_depthwise16_seed_", seed), rng, pick(0, 2) ? 32767 : 127, true);
}

TEST(GemmS16, WideWindowSixteenBitDepthwiseMatchesReference) { check_every_isa(wide_window_depthwise16, 26000, 40); }

TEST(GemmS16, FullScaleSixteenBitDepthwiseMatchesReference) { check_every_isa(full_scale_depthwise16, 25000, 8); }

TEST(GemmS16, ChannelSplitOverThreadsMatchesReference) { check_every_isa(many_channel_conv, 24000, 30); }

TEST(GemmS16, WideRowsMatchReferenceThroughTheVectorIm2col) {
  check_every_isa(random_wide_conv, 20000, 60);
  check_every_isa(random_wide_depthwise, 21000, 60);
}

TEST(GemmS16, EveryAvailableIsaMatchesReferenceConvTransposeBitExactly) {
  check_every_isa(random_conv_transpose, 8000, 100);
  check_every_isa(random_tiled_conv_transpose, 9000, 80);
}

TEST(GemmS16, EveryAvailableIsaMatchesReferenceMatMulBitExactly) { check_every_isa(random_matmul, 5000, 80); }

// 16-bit layers (int16/uint16 codes with any zero point, 16-bit weights): the GEMM sums byte
// planes of the operands (each below 2^8) and adds them in int64, bit-exact with the reference.
TEST(GemmS16, SixteenBitLayersMatchReferenceBitExactlyThroughBytePlanes) {
  std::map<std::string, int> used = check_every_isa(random_conv16, 12000, 120);
  for (const auto& [kernel, n] : check_every_isa(random_deep_conv16, 15000, 40)) used[kernel] += n;
  for (const auto& [kernel, n] : used) std::printf("[ kernel ] %s: %d 16-bit conv layers\n", kernel.c_str(), n);
  if (xk::gemm_s16_pairs_for("avx512vnni") && !std::getenv("FIXPOINT_TEST_SEED")) {
    EXPECT_GT(used["gemm_s16pairs_s32_avx512vnni"], 40) << "the 16-bit convs of the VNNI ISA run on the pairs kernel";
  }
  check_every_isa(random_conv_transpose16, 14000, 80);
  check_every_isa(random_matmul16, 13000, 60);
}

// The worst case of the pairs kernel's blocks (pack_conv_pairs): whole rows of +32767 or -32768
// and every input code 65535 (both bytes 255), so every block's int32 sum sits at the bound a
// block may reach; a block one word too long wraps. Other rows random. Output scale set so one
// unit of the sum's 2^31 moves the output by about one code (no saturation hides a wrap).
Case worst_case_conv16(uint32_t seed) {
  std::mt19937 rng(seed);
  test::ConvSpec spec;
  spec.x = {1, std::array<int64_t, 3>{24, 96, 201}[seed % 3], 5, 6};
  spec.M = 4;
  spec.kernel = {3, 3};
  spec.strides = spec.dilations = {1, 1};
  spec.pads = {1, 1, 1, 1};
  Case c = test::make_conv_case(spec, cat("worst_conv16_seed_", seed), rng, 32767, true);
  auto& p = c.op.as<params::Conv>();
  int64_t K = p.weight.numel() / spec.M;
  for (int64_t k = 0; k < K; ++k) {
    p.weight.set_f64(k, 32767);
    p.weight.set_f64(K + k, -32768);
  }
  c.qx.type = DType::UInt16;
  c.qx.zero_point = 0;
  c.x = Tensor(DType::UInt16, spec.x);
  for (int64_t i = 0; i < c.x.numel(); ++i) c.x.data<uint16_t>()[i] = 65535;
  c.qy.type = DType::Int16;
  c.qy.zero_point = 0;
  p.lo = -32768;
  p.hi = 32767;
  for (int64_t m = 0; m < spec.M; ++m) {
    p.bias.data<int64_t>()[m] = 0;
    p.mult.data<int64_t>()[m] = int64_t{1} << 30;
    p.shift.data<int64_t>()[m] = 30 + 32;  // |sum| < K 2^31 -> output within +-K/2
  }
  return c;
}

TEST(GemmS16, PairsBlocksHoldTheWorstCaseSums) { check_every_isa(worst_case_conv16, 17000, 6); }

// 16-bit codes with int8 weights (a --params8 layer): on VNNI the codes' byte planes run on the
// quads kernel (PackedWeights::byte_planes), or its pixel form with the int64 transposed epilogue
// for layers of 32 channels or more. Random deep convs (groups, strides, dilations, pads, any zero
// point; a quarter of them 32-100 channels wide, half of those non-wide layers of 1-3 input
// channels (int32 accumulators), some with shifts below 33, which the wide vector epilogue does
// not take), and a worst case: every code 65535 or 0 (u's bytes both 255 or
// both 0, by column) against rows of +127 and -128, 24-201 channels.
Case random_deep_conv16_w8(uint32_t seed) {
  if (seed % 4 == 1) {
    const bool shallow = seed % 8 == 5;
    Case c = deep_conv16(seed, 127, true, shallow);
    auto& p = c.op.as<params::Conv>();
    if (shallow) {  // K <= 75: K 65535 128 + |bias| < 2^31, an int32 accumulator (§4)
      EXPECT_LE(p.weight.numel() / p.weight.dim(0), 75);
      p.wide = false;
      for (int64_t m = 0; m < p.bias.numel(); ++m) p.bias.data<int64_t>()[m] %= int64_t{1} << 20;
    }
    if (seed % 3 == 0)
      for (int64_t m = 0; m < p.shift.numel(); m += 7) p.shift.data<int64_t>()[m] = 32;
    return c;
  }
  if (seed % 4) return deep_conv16(seed, 127);
  std::mt19937 rng(seed);
  Case c = worst_case_conv16(seed);
  auto& p = c.op.as<params::Conv>();
  const int64_t M = p.weight.dim(0), K = p.weight.numel() / M;
  Tensor w8(DType::Int8, p.weight.shape());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k)
      w8.data<int8_t>()[m * K + k] = static_cast<int8_t>(m % 2 ? -128 : m % 4 == 0 ? 127 : static_cast<int>(rng() % 256) - 128);
  p.weight = w8;
  p.weight_bits = 8;
  const int64_t W = c.x.dim(3);
  for (int64_t i = 0; i < c.x.numel(); ++i) c.x.data<uint16_t>()[i] = i % W % 3 ? 65535 : 0;
  // |sum| <= 65535 128 K < 2^34: one output code per 2^20 of the sum, no saturation.
  for (int64_t m = 0; m < M; ++m) p.shift.data<int64_t>()[m] = 30 + 20;
  return c;
}

TEST(GemmS16, SixteenBitCodesWithInt8WeightsRunOnTheQuadsKernelBitExactly) {
  std::map<std::string, int> used = check_every_isa(random_deep_conv16_w8, 31000, 60);
  for (const auto& [kernel, n] : used) std::printf("[ kernel ] %s: %d layers\n", kernel.c_str(), n);
  if (xk::gemm_u8s8_for("avx512vnni") && !std::getenv("FIXPOINT_TEST_SEED")) {
    EXPECT_GT(used["gemm_u8s8s32_avx512vnni"], 30) << "16-bit codes with int8 weights on the byte planes";
    EXPECT_GT(used["gemm_u8s8s32_6px64c_avx512vnni"], 10) << "the wide layers on the pixel form";
  }
  check_every_isa(random_depthwise16_w8, 33000, 60);  // depthwise layers: int8 taps on 16-bit codes
  used = check_every_isa(random_matmul16_w8, 32000, 40);
  if (xk::gemm_u8s8_for("avx512vnni") && !std::getenv("FIXPOINT_TEST_SEED")) {
    EXPECT_EQ(used["gemm_u8s8s32_avx512vnni"], 40) << "16-bit MatMuls with int8 weights on the byte planes";
  }
}

// 16-bit tiled ConvTranspose: the runtime (weights packed at load) takes the pairs kernel's
// pointwise GEMM and gives the reference codes; per call, the int16 GEMM + col2im does.
TEST(GemmS16, TiledSixteenBitConvTransposeRunsOnThePairsKernelBitExactly) {
  check_every_isa(random_tiled_conv_transpose16, 16000, 60);
  if (!xk::gemm_s16_pairs_for("avx512vnni")) GTEST_SKIP() << "no AVX-512 VNNI: no pairs kernel";
  for (uint32_t seed : seeds(16000, 30)) {
    Case c = random_tiled_conv_transpose16(seed);
    auto pw = xk::pack_weights(c.op, c.qx.type, "avx512vnni");
    ASSERT_TRUE(pw && pw->pairs) << c.op.node.label();
    for (int threads : {1, 2, 3}) {
      std::vector<Tensor> out(1);
      qref::QContext ctx{c.op, {&c.x}, {c.qx}, {c.qy}, out, threads};
      ASSERT_TRUE(xk::conv_transpose_tiled_s16(ctx, *pw)) << c.op.node.label();
      expect_same_codes(run(c, 1, ""), out[0], cat("tiled s16 threads=", threads, " seed=", seed));
    }
  }
}

// An int8-weight conv the AMX kernel takes (one group, at least 32 input channels, 16 output channels;
// counts of whole tiles and not): 1-D or 2-D, any kernel size, stride, dilation and padding, and
// sometimes few positions (tasks then split the channels in blocks of 16).
Case random_amx_conv(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int64_t rank = pick(1, 2);
  test::ConvSpec spec;
  spec.x = {pick(1, 2), pick(0, 1) ? 64 * pick(1, 3) : pick(xk::kAmxMinChannels, 200)};
  spec.M = pick(0, 1) ? 16 * pick(1, 9) : pick(16, 150);
  spec.pads.resize(2 * rank);
  const bool small = pick(0, 3) == 0;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t k = pick(1, 4);
    spec.kernel.push_back(k);
    spec.strides.push_back(pick(1, 2));
    spec.dilations.push_back(pick(1, 2));
    spec.pads[i] = pick(0, k / 2 + 1);
    spec.pads[i + rank] = pick(0, k / 2);
    spec.x.push_back(reach(spec, static_cast<size_t>(i), small ? pick(1, 4) : rank == 1 ? pick(20, 200) : pick(5, 24)));
  }
  // A third each: 8-bit codes; 16-bit codes with int8 weights (each byte plane's sums on the
  // tiles); 16-bit codes and weights (four byte-plane sums)
  return test::make_conv_case(spec, cat("amx_conv_seed_", seed), rng, seed % 3 == 2 ? 32767 : 127, seed % 3 != 0);
}

// A 16-bit MatMul the AMX kernel takes (as a 1x1 conv): K >= 32, N >= 16 (a classifier head
// half the time), 16-bit or 8-bit weights.
Case random_amx_matmul(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int64_t K = pick(xk::kAmxMinChannels, 600), N = seed % 2 ? pick(100, 700) : pick(16, 70);
  Shape xs = {pick(1, 2), pick(1, 60), K};
  return test::make_matmul_case(xs, N, cat("amx_matmul_seed_", seed), rng, pick(0, 1) ? 127 : 32767, true);
}

// The AMX tiles (where this CPU and OS offer them) give the reference codes, at 1-3 threads.
TEST(GemmU8S8Amx, MatchesReferenceConvBitExactly) {
  if (!fixpoint::cpu_has_amx_int8() || !xk::gemm_u8s8_for("avx512vnni")) GTEST_SKIP() << "no AMX-INT8 tiles here";
  int on_amx = 0;
  for (uint32_t seed : seeds(41000, 60)) {
    Case c = seed % 4 == 3 ? random_amx_matmul(seed) : random_amx_conv(seed);
    Tensor want = run(c, 1, "");
    for (int threads : {1, 2, 3}) {
      std::string kernel;
      Tensor got = run(c, threads, "avx512vnni", &kernel, true);
      expect_same_codes(want, got, cat(kernel, " threads=", threads, " seed=", seed, " ", c.op.node.label()));
      if (threads == 1 && kernel == "gemm_u8s8s32_amx") ++on_amx;
    }
  }
  if (!std::getenv("FIXPOINT_TEST_SEED")) {
    EXPECT_EQ(on_amx, 60) << "every such layer (conv or MatMul) on the AMX kernel";
  }
}

// An 8-bit conv of an image's channels the AMX rows form takes (ResNet-18's stem: 3 channels,
// 7 x 7, stride 2): 1-4 input channels, kernels of 2-16 columns and at least 64 taps, strides
// 1-3, row dilation 1-2, pads, 16-100 output channels (whole blocks of 16 and not, more than
// 64: several tasks' blocks), widths that leave partial tiles of sixteen positions, 8- or 16-bit
// output codes.
Case random_amx_rows_conv(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  test::ConvSpec spec;
  const int64_t cg = pick(1, 4);
  spec.x = {pick(1, 2), cg};
  spec.M = pick(0, 1) ? 16 * pick(1, 6) : pick(16, 100);
  const int64_t kw = pick(0, 4) ? pick(2, 8) : pick(9, 16);
  spec.kernel = {std::max(pick(1, 8), (64 + cg * kw - 1) / (cg * kw)), kw};
  spec.strides = {pick(1, 3), pick(1, 3)};
  spec.dilations = {pick(1, 2), 1};
  spec.pads = {pick(0, spec.kernel[0] / 2 + 1), pick(0, spec.kernel[1] / 2 + 1), pick(0, spec.kernel[0] / 2),
               pick(0, spec.kernel[1] / 2)};
  spec.x.push_back(reach(spec, 0, pick(1, 12)));
  spec.x.push_back(reach(spec, 1, pick(1, 40)));
  Case c = test::make_conv_case(spec, cat("amx_rows_conv_seed_", seed), rng, 127, false);
  sometimes_16bit_output(c, rng);
  return c;
}

// The rows form (where this CPU and OS offer AMX) gives the reference codes at 1-3 threads, and
// takes every such layer.
TEST(GemmU8S8Amx, RowsFormMatchesReferenceConvBitExactly) {
  if (!fixpoint::cpu_has_amx_int8() || !xk::gemm_u8s8_for("avx512vnni")) GTEST_SKIP() << "no AMX-INT8 tiles here";
  int on_rows = 0, count = 0;
  for (uint32_t seed : seeds(43000, 80)) {
    Case c = random_amx_rows_conv(seed);
    Tensor want = run(c, 1, "");
    for (int threads : {1, 2, 3}) {
      std::string kernel;
      Tensor got = run(c, threads, "avx512vnni", &kernel, true);
      expect_same_codes(want, got, cat(kernel, " threads=", threads, " seed=", seed, " ", c.op.node.label()));
      if (threads == 1 && kernel == "conv_rows_u8s8s32_amx") ++on_rows;
    }
    ++count;
  }
  EXPECT_EQ(on_rows, count) << "every such layer on the rows form";
}

TEST(GemmS16, DispatchPicksTheWidestIsaTheCpuReports) {
  auto kernels = xk::available_gemm_s16();
  ASSERT_FALSE(kernels.empty());
  EXPECT_STREQ(kernels.front()->isa, "scalar");
  if (!std::getenv("FIXPOINT_ISA")) {
    EXPECT_EQ(fixpoint::selected_isa(), kernels.back()->isa);
  }
  if (__builtin_cpu_supports("avx2")) {
    EXPECT_NE(xk::gemm_s16_for("avx2"), nullptr);
  }
  EXPECT_EQ(xk::gemm_s16_for("sse9"), nullptr);
  for (const auto* k : kernels) EXPECT_NE(xk::gemm_u8s8_for(k->isa), nullptr) << k->isa;
}

}  // namespace
}  // namespace fixpoint
