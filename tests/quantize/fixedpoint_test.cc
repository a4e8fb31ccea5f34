// docs/arithmetic.md §1, §3: the scalar primitives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "fixpoint/fixedpoint.h"

namespace fixpoint::fx {
namespace {

TEST(FixedPoint, RoundHalfUpEverywhere) {
  EXPECT_EQ(round_half_up(0.5), 1);
  EXPECT_EQ(round_half_up(-0.5), 0);
  EXPECT_EQ(round_half_up(2.5), 3);
  EXPECT_EQ(round_half_up(-2.5), -2);
  EXPECT_EQ(round_half_up(-2.51), -3);
  // The seed thread's numbers: floor(0.8*256 + 0.5) = 205, floor(205/4 + 0.5) = 51 -> 51/64.
  EXPECT_EQ(quantize(0.8f, 1.0 / 256, 0, range_of(DType::UInt8)), 205);
  EXPECT_EQ(rsh(205 * 64, 8), 51);
  EXPECT_EQ(dequantize(51, 1.0 / 64, 0), 0.796875f);
}

TEST(FixedPoint, RshIsRoundHalfUpOfExactQuotient) {
  std::mt19937_64 rng(7);
  std::printf("seed 7\n");
  for (int i = 0; i < 100000; ++i) {
    int64_t v = static_cast<int64_t>(rng() >> 20) - (int64_t{1} << 43);
    int n = static_cast<int>(rng() % 40) + 1;
    long double exact = std::floor(static_cast<long double>(v) / std::ldexp(1.0L, n) + 0.5L);
    ASSERT_EQ(rsh(v, n), static_cast<int64_t>(exact)) << v << " >> " << n;
    ASSERT_EQ(static_cast<int64_t>(rsh128(v, n)), rsh(v, n));
  }
  EXPECT_EQ(rsh(3, -2), 12);
}

TEST(FixedPoint, SaturationAndQuantizeRanges) {
  EXPECT_EQ(quantize(1000.0, 1.0, 0, range_of(DType::Int8)), 127);
  EXPECT_EQ(quantize(-1000.0, 1.0, 0, range_of(DType::Int8)), -128);
  EXPECT_EQ(quantize(-3.0, 1.0, 0, range_of(DType::UInt8)), 0);
  EXPECT_EQ(quantize(70000.0, 1.0, 0, range_of(DType::UInt16)), 65535);
  // §2.8: NaN -> the zero point, +-Inf saturate.
  EXPECT_EQ(quantize(std::nan(""), 1.0, 0, range_of(DType::Int16)), 0);
  EXPECT_EQ(quantize(std::nan(""), 0.5, 128, range_of(DType::UInt8)), 128);
  EXPECT_EQ(quantize(INFINITY, 0.5, 128, range_of(DType::UInt8)), 255);
  EXPECT_EQ(quantize(-INFINITY, 0.5, 128, range_of(DType::UInt8)), 0);
}

// (5b): ONNX's QuantizeLinear (QDQ imports): float32 quotient, half to even, then z and saturation.
TEST(FixedPoint, QuantizeOnnxRoundsHalfToEvenInFloat32) {
  const Range u8 = range_of(DType::UInt8), i8 = range_of(DType::Int8);
  EXPECT_EQ(quantize_onnx(0.5f, 1.0f, 0, i8), 0);  // (5) gives 1
  EXPECT_EQ(quantize_onnx(1.5f, 1.0f, 0, i8), 2);
  EXPECT_EQ(quantize_onnx(-0.5f, 1.0f, 0, i8), 0);
  EXPECT_EQ(quantize_onnx(-1.5f, 1.0f, 0, i8), -2);  // (5) gives -1
  EXPECT_EQ(quantize(-1.5, 1.0, 0, i8), -1);
  // A pixel p normalized by (p / 255 - 0.5) / 0.5 at the scale 2/255: ties in float32.
  for (int p = 0; p < 256; ++p) {
    float x = (static_cast<float>(p) / 255.0f - 0.5f) / 0.5f, s = 2.0f / 255.0f;
    float t = x / s;
    int64_t want = static_cast<int64_t>(std::nearbyint(t)) + 127;
    ASSERT_EQ(quantize_onnx(x, s, 127, u8), std::clamp<int64_t>(want, 0, 255)) << p;
  }
  EXPECT_EQ(quantize_onnx(1000.0f, 1.0f, 0, i8), 127);
  EXPECT_EQ(quantize_onnx(-INFINITY, 0.5f, 128, u8), 0);
  EXPECT_EQ(quantize_onnx(std::nanf(""), 0.5f, 128, u8), 128);
}

TEST(FixedPoint, MultiplierIsAccurateAndNormalized) {
  std::mt19937_64 rng(11);
  std::printf("seed 11\n");
  std::uniform_real_distribution<double> e(-20, 10);
  for (int i = 0; i < 10000; ++i) {
    double M = std::exp2(e(rng));
    Multiplier mu = make_multiplier(M, false);
    ASSERT_GE(mu.m, int64_t{1} << 30);
    ASSERT_LT(mu.m, int64_t{1} << 31);
    ASSERT_LE(std::abs(mu.value() - M) / M, std::ldexp(1.0, -31)) << M;
  }
  Multiplier p = make_multiplier(1.0 / 256, true);
  EXPECT_EQ(p.m, 1);
  EXPECT_EQ(p.n, 8);
  Multiplier up = make_multiplier(4.0, true);
  EXPECT_EQ(up.n, -2);
  EXPECT_THROW(make_multiplier(0.3, true), Error);
}

TEST(FixedPoint, RequantizeMatchesRealArithmetic) {
  std::mt19937_64 rng(13);
  std::printf("seed 13\n");
  for (int i = 0; i < 20000; ++i) {
    double M = std::exp2(-static_cast<double>(rng() % 200) / 10.0);
    int64_t a = static_cast<int64_t>(rng() % (int64_t{1} << 31)) - (int64_t{1} << 30);
    Multiplier mu = make_multiplier(M, false);
    int64_t got = requantize(a, mu, 0, range_of(DType::Int64));
    ASSERT_EQ(got, requantize_wide(a, mu, 0, range_of(DType::Int64)));
    // within 1/2 LSB of a*M plus the multiplier's relative error 2^-31
    ASSERT_LE(std::abs(static_cast<double>(got) - a * M), 0.5 + std::abs(a * M) * std::ldexp(1.0, -31) + 1e-9);
  }
}

}  // namespace
}  // namespace fixpoint::fx
