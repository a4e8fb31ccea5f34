// fixpoint: the scalar fixed-point primitives of docs/arithmetic.md. Every integer kernel uses
// these; none writes its own rounding. Equation numbers refer to docs/arithmetic.md.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "fixpoint/dtype.h"
#include "fixpoint/error.h"

namespace fixpoint::fx {

// (2) R(x) = floor(x + 1/2): the project's one rounding rule.
inline double round_half_up(double x) { return std::floor(x + 0.5); }

// Range of a storage type (u8, i8, u16, i16; int32/int64 for accumulators).
struct Range {
  int64_t lo, hi;
};
inline Range range_of(DType t) {
  switch (t) {
    case DType::UInt8: return {0, 255};
    case DType::Int8: return {-128, 127};
    case DType::UInt16: return {0, 65535};
    case DType::Int16: return {-32768, 32767};
    case DType::Int32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default: return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

// (3) SAT: clamp to [lo, hi].
inline int64_t sat(int64_t v, Range r) { return v < r.lo ? r.lo : (v > r.hi ? r.hi : v); }

// (4) RSH(v, n): rounding (half up) arithmetic right shift; n < 0 shifts left.
inline int64_t rsh(int64_t v, int n) {
  if (n <= 0) return v * (int64_t{1} << -n);
  if (n >= 63) return v >= 0 ? 0 : (v >= -(int64_t{1} << 62) ? 0 : -1);  // |v| < 2^63: rounds to 0 or -1
  return (v + (int64_t{1} << (n - 1))) >> n;
}
inline __int128 rsh128(__int128 v, int n) {
  if (n <= 0) return v * (static_cast<__int128>(1) << -n);
  if (n >= 126) return 0;
  return (v + (static_cast<__int128>(1) << (n - 1))) >> n;
}

// (3) SAT of a rounded code held in a double (quantize's last step; -Inf and Inf saturate).
inline int64_t sat_rounded(double v, Range range) {
  if (!(v >= static_cast<double>(range.lo))) return range.lo;
  if (v >= static_cast<double>(range.hi)) return range.hi;  // >=: int64's hi rounds up to 2^63 as a double
  return static_cast<int64_t>(v);
}

// (5) float -> integer code: SAT(R(r / s) + z), in double.
// Non-finite inputs (§2.8): NaN -> the zero point (real 0), +-Inf saturate like any large value.
inline int64_t quantize(double r, double scale, int64_t zero_point, Range range) {
  if (std::isnan(r)) return sat(zero_point, range);
  return sat_rounded(round_half_up(r / scale) + static_cast<double>(zero_point), range);
}

// (5b) float -> integer code as ONNX's QuantizeLinear computes it (the graph inputs and float
// fallback outputs of an imported QDQ model, whose pairs define their rounding): the quotient
// in float32, rounded half to even, then z added and saturated. NaN -> the zero point as (5).
inline int64_t quantize_onnx(float r, float scale, int64_t zero_point, Range range) {
  if (std::isnan(r)) return sat(zero_point, range);
  // nearbyint in the default rounding mode: half to even
  return sat_rounded(static_cast<double>(std::nearbyint(r / scale)) + static_cast<double>(zero_point), range);
}

// (6) integer code -> float32: (float)(s * (q - z)).
inline float dequantize(int64_t q, double scale, int64_t zero_point) {
  return static_cast<float>(scale * static_cast<double>(q - zero_point));
}

// (12) A real multiplier M as m * 2^-n.
struct Multiplier {
  int64_t m = 1;
  int n = 0;
  double value() const { return static_cast<double>(m) * std::ldexp(1.0, -n); }
};
// max_shift bounds n: 62 where a·m is formed in int64 (8-bit layers), up to 125 where (13) runs
// in 128 bits ("wide" layers), so tiny ratios keep their 31 significant bits there.
constexpr int kMaxShift64 = 62, kMaxShift128 = 125;
Multiplier make_multiplier(double M, bool pow2, int max_shift = kMaxShift64);

// (13) RQ(a) = SAT_[lo,hi](RSH(a * m, n) + z). a*m in int64 (8-bit layers: |a| < 2^31, m < 2^31).
inline int64_t requantize(int64_t a, const Multiplier& mu, int64_t z, Range r) {
  return sat(rsh(a * mu.m, mu.n) + z, r);
}
// (13) for 16-bit layers: the product in 128 bits.
inline int64_t requantize_wide(int64_t a, const Multiplier& mu, int64_t z, Range r) {
  __int128 v = rsh128(static_cast<__int128>(a) * mu.m, mu.n);
  if (v < r.lo - z) return r.lo;
  if (v > r.hi - z) return r.hi;
  return static_cast<int64_t>(v) + z;
}

// (28) ISQRT(v) = floor(sqrt(v)) for 0 <= v < 2^126, exactly (digit-by-digit, no floating point).
inline __int128 isqrt128(__int128 v) {
  __int128 r = 0, bit = static_cast<__int128>(1) << 124;
  while (bit > v) bit >>= 2;
  while (bit != 0) {
    if (v >= r + bit) {
      v -= r + bit;
      r = (r >> 1) + bit;
    } else {
      r >>= 1;
    }
    bit >>= 2;
  }
  return r;
}

// Floor division of integers (C++ '/' truncates toward zero); int64_t or __int128.
template <typename T>
inline T floor_div(T a, T b) {
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// (32) R(a / b) = floor(a / b + 1/2) = floor((2a + b) / 2b) for b > 0: the one rounding rule
// applied to an exact ratio of integers (b != 0; the sign is moved into a).
inline __int128 round_div(__int128 a, __int128 b) {
  if (b < 0) {
    a = -a;
    b = -b;
  }
  return floor_div<__int128>(2 * a + b, 2 * b);
}

// (19), (31) RQ of a mean: SAT(R(a · m / (count · 2^n)) + z) with M = m · 2^-n (12) made at
// compile time and count (>= 1, from the shape) dividing exactly, rounded by (32): no multiplier
// is derived from the count. |a| < 2^52, m < 2^31, -31 <= n <= 62, count < 2^36 keep every
// intermediate below 2^116.
inline int64_t requantize_mean(int64_t a, const Multiplier& mu, int64_t count, int64_t z, Range r) {
  __int128 num = static_cast<__int128>(a) * mu.m, den = count;
  if (mu.n >= 0) den *= static_cast<__int128>(1) << mu.n;
  else num *= static_cast<__int128>(1) << -mu.n;
  constexpr __int128 k61 = static_cast<__int128>(1) << 61;
  // (32) in int64 where 2 num + den and 2 den fit (the pools' usual case: a 128-bit division
  // per output was most of an 8-bit AveragePool's time), else in 128 bits: the same value.
  __int128 v = num > -k61 && num < k61 && den < k61
                   ? floor_div<int64_t>(2 * static_cast<int64_t>(num) + static_cast<int64_t>(den), 2 * static_cast<int64_t>(den))
                   : round_div(num, den);
  if (v < r.lo - z) return r.lo;
  if (v > r.hi - z) return r.hi;
  return static_cast<int64_t>(v) + z;
}

}  // namespace fixpoint::fx
