// The vector requantization epilogue (requant.h) against fx::requantize (13), bit for bit, on
// seeded random and extreme accumulators, multipliers, shifts, zero points and clamps. A failure
// prints the seed; FIXPOINT_TEST_SEED=S reruns one case.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "fixpoint/cpu_isa.h"
#include "fixpoint/fixedpoint.h"
#include "kernels/x86/requant.h"

namespace fixpoint {
namespace {

TEST(RequantRow, Avx2MatchesScalarRequantizeBitExactly) {
  if (!cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 on this CPU";
  uint32_t first = 1, count = 3000;
  if (const char* s = std::getenv("FIXPOINT_TEST_SEED")) first = static_cast<uint32_t>(std::strtoul(s, nullptr, 10)), count = 1;
  for (uint32_t seed = first; seed < first + count; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    int n = static_cast<int>(seed % 4 == 0 ? (seed % 8 == 0 ? 1 : 62) : pick(1, 62));
    int64_t m = seed % 5 == 0 ? (int64_t{1} << 31) - 1 : pick(1, (int64_t{1} << 31) - 1);
    if (seed % 3 == 0) m = pick(1, int64_t{1} << 12);  // small n and m: results that do not saturate
    bool u8 = pick(0, 1) == 1, wide_out = pick(0, 3) == 0;
    fx::Range r = wide_out ? fx::Range{-32768, 32767} : u8 ? fx::Range{0, 255} : fx::Range{-128, 127};
    r.lo = pick(r.lo, (r.lo + r.hi) / 2);  // a fused Relu/Clip narrows the range
    int64_t z = pick(r.lo, r.hi);
    // |bias + sum| < 2^31 (§4): bias anywhere in it, sums within what is left.
    int64_t bias = pick(-(int64_t{1} << 30), int64_t{1} << 30), room = (int64_t{1} << 31) - 1 - std::abs(bias);
    int64_t count = pick(0, 40), scale = pick(0, 3) == 0 ? room : pick(0, 1 << 20);
    std::vector<int32_t> sum(static_cast<size_t>(count)), want(sum.size());
    for (size_t i = 0; i < sum.size(); ++i) {
      int64_t v = pick(0, 9) == 0 ? (pick(0, 1) ? room : -room) : pick(-scale, scale);
      sum[i] = static_cast<int32_t>(v);
      want[i] = static_cast<int32_t>(fx::requantize(bias + v, {m, n}, z, r));
    }
    std::vector<int32_t> got = sum;
    int64_t done = xk::requant_row_s32_avx2(got.data(), count, static_cast<int32_t>(bias), m, n,
                                            static_cast<int32_t>(r.lo - z), static_cast<int32_t>(r.hi - z), static_cast<int32_t>(z));
    ASSERT_EQ(done, count / 8 * 8) << "seed " << seed;
    for (int64_t i = 0; i < done; ++i)
      ASSERT_EQ(got[i], want[i]) << "seed " << seed << " i " << i << " a " << bias + sum[i] << " m " << m << " n " << n << " z " << z;
    for (int64_t i = done; i < count; ++i) ASSERT_EQ(got[i], sum[i]) << "seed " << seed << ": the tail is the caller's";
  }
}

}  // namespace
}  // namespace fixpoint
