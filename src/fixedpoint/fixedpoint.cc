#include "fixpoint/fixedpoint.h"

namespace fixpoint::fx {

// (12): float mode m in [2^30, 2^31); pow2 mode requires M to be a power of two.
Multiplier make_multiplier(double M, bool pow2, int max_shift) {
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
  // n stays within what RSH can shift in the product's width: past it the multiplier keeps
  // fewer significant bits (the compiler reports a layer where that loses precision).
  if (r.n > max_shift) {
    r.m = static_cast<int64_t>(round_half_up(std::ldexp(static_cast<double>(r.m), max_shift - r.n)));
    r.n = max_shift;
  }
  return r;
}

}  // namespace fixpoint::fx
