// fixpoint: (20a) a table op's curve, docs/arithmetic.md §5.8. A HardSwish or HardSigmoid table
// (with any scalar ops absorbed into it) keeps, next to its 65536 codes, the few float32
// constants of a curve that gives the same codes; a vector kernel evaluates the curve instead of
// looking codes up (a lookup costs a load per code from a table larger than L1). The table stays
// the definition: the compiler stores a curve only after checking every input code against it,
// the artifact loader checks again, and where a curve value lies within kCurveMargin of a
// rounding boundary (float32 error could tip it) the kernel takes that code from the table.
//
// Every step is one IEEE float32 operation in the order below: no fused multiply-add, so the
// scalar form here and a vector kernel compiled with -ffp-contract=off give the same floats.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "fixpoint/fixedpoint.h"

namespace fixpoint::fx {

// v(q) = (q * ua + ub) * min(max(q * ta + tb, 0), 1) + b, in output code units. HardSwish
// x * min(max(alpha x + beta, 0), 1) with x = s_x (q - z_x), then a1 h + a0 (absorbed ops), over
// s_y, plus z_y: ta = s_x alpha, tb = beta - alpha s_x z_x, ua = s_x a1 / s_y, ub = -z_x ua,
// b = a0 / s_y + z_y. HardSigmoid (h = the clamp): ua = 0, ub = a1 / s_y.
struct TableCurve {
  static constexpr int64_t kSize = 5;  // float32 values in params::Table::curve: ta, tb, ua, ub, b
  float ta = 0, tb = 0, ua = 0, ub = 0, b = 0;
  float lo = 0, hi = 0;  // the output codes' range

  void to_values(float* v) const {
    const float w[kSize] = {ta, tb, ua, ub, b};
    std::copy(w, w + kSize, v);
  }
  static TableCurve from_values(const float* v, Range out) {
    return {v[0], v[1], v[2], v[3], v[4], static_cast<float>(out.lo), static_cast<float>(out.hi)};
  }
};

// Codes whose curve value lies this close to a rounding boundary come from the table. The
// float32 rounding errors of (20a) are a few units in the last place of values below 2^8 (about
// 2^-15 of a code for 8-bit outputs), so 2^-10 leaves a wide margin and sends at most about
// 2 * 2^-10 of the codes to the table (0.09% in the unit test's tables, whose saturated codes lie
// on integers). The margin is not what makes the curve exact: the check of every code is.
constexpr float kCurveMargin = 1.0f / 1024;

// (20a) the value before rounding: six float32 operations and a clamp.
inline float curve_value(const TableCurve& c, int64_t q) {
  float qf = static_cast<float>(q);
  float t = qf * c.ta;
  t = t + c.tb;
  t = std::min(std::max(t, 0.0f), 1.0f);
  float u = qf * c.ua;
  u = u + c.ub;
  float v = u * t;
  return v + c.b;
}

// (20a) The curve's code of q: v rounded half to even, saturated. `near` says v lies within
// kCurveMargin of a rounding boundary, where the code must come from the table.
inline int64_t curve_code(const TableCurve& c, int64_t q, bool* near) {
  float v = curve_value(c, q);
  float r = std::nearbyint(v);  // half to even; only codes away from a half are ever used
  *near = std::fabs(v - r) >= 0.5f - kCurveMargin;
  return static_cast<int64_t>(std::min(std::max(r, c.lo), c.hi));
}

// The first input code q in [lo, lo + n) whose table entry entry(q - lo) differs from its curve
// code (codes near a boundary are not compared: they are looked up), or lo + n when none does.
template <class Entry>
int64_t first_curve_mismatch(const TableCurve& c, int64_t lo, int64_t n, Entry entry) {
  for (int64_t i = 0; i < n; ++i) {
    bool near;
    int64_t code = curve_code(c, lo + i, &near);
    if (!near && code != entry(i)) return lo + i;
  }
  return lo + n;
}

}  // namespace fixpoint::fx
