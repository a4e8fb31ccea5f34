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

// The codes an epilogue case stores: 8-bit (uint8 or int8) or int16, over a range a fused
// Relu/Clip may narrow, with a zero point in it.
struct OutCodes {
  fx::Range r;
  int64_t z;
  int bytes;
  bool u8;
  // Code k of out (little-endian codes of `bytes` bytes).
  int64_t at(const std::vector<uint8_t>& out, size_t k) const {
    if (bytes == 2) return static_cast<int16_t>(out[2 * k] | (out[2 * k + 1] << 8));
    return u8 ? out[k] : static_cast<int8_t>(out[k]);
  }
};
template <class Pick>
OutCodes random_out_codes(Pick& pick) {
  bool u8 = pick(0, 1) == 1, wide_out = pick(0, 2) == 0;
  fx::Range r = wide_out ? fx::Range{-32768, 32767} : u8 ? fx::Range{0, 255} : fx::Range{-128, 127};
  r.lo = pick(r.lo, (r.lo + r.hi) / 2);
  const int64_t z = pick(r.lo, r.hi);
  return {r, z, wide_out ? 2 : 1, u8};
}

// A channel's multiplier m (often the largest, or small enough that results do not saturate)
// and bias, and the sums it meets: |bias + sum| < 2^31 (§4), the bias anywhere in it, the sums
// within what is left (a tenth of them at its ends).
struct Channel {
  int64_t m, bias, room, scale;
  template <class Pick>
  int64_t sum(Pick& pick) const {
    return pick(0, 9) == 0 ? (pick(0, 1) ? room : -room) : pick(-scale, scale);
  }
};
template <class Pick>
Channel random_channel(Pick& pick) {
  int64_t m = pick(0, 4) == 0 ? (int64_t{1} << 31) - 1 : pick(1, (int64_t{1} << 31) - 1);
  if (pick(0, 2) == 0) m = pick(1, int64_t{1} << 12);
  int64_t b = pick(-(int64_t{1} << 30), int64_t{1} << 30), room = (int64_t{1} << 31) - 1 - std::abs(b);
  int64_t scale = pick(0, 3) == 0 ? room : pick(0, 1 << 20);
  return {m, b, room, scale};
}

// The AVX-512 one-pass store and its rows form (several channels, each its own bias,
// multiplier and shift, as the 1x1 convs call it), on both of their paths: n < 32 (the 64-bit
// shift and clamp) and n >= 32 (the high halves, shifted and clamped in 32 bits).
TEST(RequantStore, Avx512StoreAndRowsMatchScalarRequantizeBitExactly) {
  if (!cpu_supports("avx512vnni")) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  uint32_t first = 1, count = 2000;
  if (const char* s = std::getenv("FIXPOINT_TEST_SEED")) first = static_cast<uint32_t>(std::strtoul(s, nullptr, 10)), count = 1;
  int high = 0, low = 0;
  for (uint32_t seed = first; seed < first + count; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int64_t rows = pick(1, 4), ni = pick(0, 70);
    const OutCodes oc = random_out_codes(pick);
    const fx::Range r = oc.r;
    const int64_t z = oc.z;
    const int bytes = oc.bytes;
    std::vector<int32_t> sum(static_cast<size_t>(rows * ni)), bias(rows), mult(rows), shift(rows);
    std::vector<int64_t> want(sum.size());
    for (int64_t j = 0; j < rows; ++j) {
      int n = static_cast<int>(pick(0, 4) == 0 ? (pick(0, 1) ? 1 : 62) : pick(0, 1) ? pick(32, 40) : pick(1, 62));
      const Channel ch = random_channel(pick);
      bias[j] = static_cast<int32_t>(ch.bias), mult[j] = static_cast<int32_t>(ch.m), shift[j] = n;
      (n >= 32 ? high : low) += 1;
      for (int64_t i = 0; i < ni; ++i) {
        int64_t v = ch.sum(pick);
        sum[j * ni + i] = static_cast<int32_t>(v);
        want[j * ni + i] = fx::requantize(ch.bias + v, {ch.m, n}, z, r);
      }
    }
    const int32_t lo_z = static_cast<int32_t>(r.lo - z), hi_z = static_cast<int32_t>(r.hi - z), z32 = static_cast<int32_t>(z);
    // One channel at a time, one past the end guarded (the store writes count codes only).
    for (int64_t j = 0; j < rows; ++j) {
      std::vector<uint8_t> out(static_cast<size_t>((ni + 1) * bytes), 0xA5);
      ASSERT_EQ(xk::requant_store_s32_avx512(sum.data() + j * ni, ni, bias[j], mult[j], shift[j], lo_z, hi_z, z32,
                                             out.data(), bytes), ni) << "seed " << seed;
      for (int64_t i = 0; i < ni; ++i) ASSERT_EQ(oc.at(out, static_cast<size_t>(i)), want[j * ni + i]) << "seed " << seed << " row " << j << " i " << i << " n " << shift[j];
      for (int k = 0; k < bytes; ++k) ASSERT_EQ(out[ni * bytes + k], 0xA5) << "seed " << seed << ": past count";
    }
    // All rows in one call, output rows ni + 3 apart (the gaps untouched).
    const int64_t ldo = ni + 3;
    std::vector<uint8_t> out(static_cast<size_t>(rows * ldo * bytes), 0xA5);
    xk::requant_rows_s32_avx512(sum.data(), ni, rows, ni, bias.data(), mult.data(), shift.data(), lo_z, hi_z, z32,
                                out.data(), ldo, bytes);
    for (int64_t j = 0; j < rows; ++j) {
      for (int64_t i = 0; i < ni; ++i) ASSERT_EQ(oc.at(out, static_cast<size_t>(j * ldo + i)), want[j * ni + i]) << "seed " << seed << " rows: row " << j << " i " << i;
      for (int64_t i = ni; i < ldo; ++i)
        for (int k = 0; k < bytes; ++k) ASSERT_EQ(out[(j * ldo + i) * bytes + k], 0xA5) << "seed " << seed << " rows: gap";
    }
  }
  if (!std::getenv("FIXPOINT_TEST_SEED")) {
    EXPECT_GT(std::min(high, low), 1000) << "both paths (n >= 32 and n < 32)";
  }
}

// The transposing epilogue of the pixel form (position-major sums in, channel-major codes out):
// 1-40 channels and 1-40 positions (whole and masked blocks of sixteen), each channel its own
// bias, multiplier and shift; half the layers with every n in [32, 62] (the usual multipliers),
// the rest with n anywhere in [1, 62].
TEST(RequantStore, Avx512TransposedMatchesScalarRequantizeBitExactly) {
  if (!cpu_supports("avx512vnni")) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  uint32_t first = 1, count = 1500;
  if (const char* s = std::getenv("FIXPOINT_TEST_SEED")) first = static_cast<uint32_t>(std::strtoul(s, nullptr, 10)), count = 1;
  int all_high = 0, mixed = 0;
  for (uint32_t seed = first; seed < first + count; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int64_t nj = pick(1, 40), ni = pick(1, 40), lds = nj + pick(0, 5), ldo = ni + pick(0, 3);
    const bool high = pick(0, 1) == 1;
    const OutCodes oc = random_out_codes(pick);
    const fx::Range r = oc.r;
    const int64_t z = oc.z;
    const int bytes = oc.bytes;
    std::vector<int32_t> sum(static_cast<size_t>(ni * lds)), bias(nj), mult(nj), shift(nj);
    std::vector<int64_t> want(static_cast<size_t>(nj * ni));
    bool any_low = false;
    for (int64_t j = 0; j < nj; ++j) {
      int n = static_cast<int>(high ? (pick(0, 4) == 0 ? (pick(0, 1) ? 32 : 62) : pick(32, 45)) : pick(1, 62));
      any_low = any_low || n < 32;
      const Channel ch = random_channel(pick);
      bias[j] = static_cast<int32_t>(ch.bias), mult[j] = static_cast<int32_t>(ch.m), shift[j] = n;
      for (int64_t i = 0; i < ni; ++i) {
        int64_t v = ch.sum(pick);
        sum[i * lds + j] = static_cast<int32_t>(v);
        want[j * ni + i] = fx::requantize(ch.bias + v, {ch.m, n}, z, r);
      }
    }
    (any_low ? mixed : all_high) += 1;
    std::vector<uint8_t> out(static_cast<size_t>(nj * ldo * bytes), 0xA5);
    xk::requant_transposed_s32_avx512(sum.data(), lds, nj, ni, bias.data(), mult.data(), shift.data(),
                                      static_cast<int32_t>(r.lo - z), static_cast<int32_t>(r.hi - z),
                                      static_cast<int32_t>(z), out.data(), ldo, bytes);
    for (int64_t j = 0; j < nj; ++j) {
      for (int64_t i = 0; i < ni; ++i) {
        ASSERT_EQ(oc.at(out, static_cast<size_t>(j * ldo + i)), want[static_cast<size_t>(j * ni + i)]) << "seed " << seed << " channel " << j << " position " << i
                                                               << " n " << shift[j];
      }
      for (int64_t i = ni; i < ldo; ++i)
        for (int k = 0; k < bytes; ++k) ASSERT_EQ(out[static_cast<size_t>((j * ldo + i) * bytes + k)], 0xA5) << "seed " << seed << ": gap";
    }
  }
  if (!std::getenv("FIXPOINT_TEST_SEED")) {
    EXPECT_GT(std::min(all_high, mixed), 500) << "both kinds of layer (every n >= 32, and some n < 32)";
  }
}

}  // namespace
}  // namespace fixpoint
