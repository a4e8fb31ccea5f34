#include "fixpoint/fixedpoint.h"

namespace fixpoint::fx {

// (12): float mode m in [2^30, 2^31); pow2 mode requires M to be a power of two.
Multiplier make_multiplier(double M, bool pow2) {
  FP_CHECK(M > 0 && std::isfinite(M), "requantization multiplier ", M, " is not a positive finite number");
  Multiplier r;
  int e = 0;
  double frac = std::frexp(M, &e);  // M = frac * 2^e, frac in [0.5, 1)
  if (pow2) {
    FP_CHECK(frac == 0.5, "pow2 scale mode: multiplier ", M, " is not a power of two");
    r.m = 1;
    r.n = 1 - e;  // M = 2^(e-1)
    return r;
  }
  // floor(log2 M) = e - 1, n = 30 - (e - 1)
  r.n = 31 - e;
  double mm = round_half_up(std::ldexp(M, r.n));
  if (mm >= 2147483648.0) {
    mm = 1073741824.0;
    r.n -= 1;
  }
  r.m = static_cast<int64_t>(mm);
  // Multipliers so small that n would exceed 62 round to zero anyway: keep n bounded.
  if (r.n > 62) {
    r.m = static_cast<int64_t>(round_half_up(std::ldexp(static_cast<double>(r.m), 62 - r.n)));
    r.n = 62;
  }
  return r;
}

}  // namespace fixpoint::fx
