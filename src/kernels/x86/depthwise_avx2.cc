// depthwise_row_s16_avx2 / _s32_avx2: one tap of a depthwise convolution over a run of output
// columns, acc[i] += w * x[i], in int32 for 8-bit codes (exact: |w x| < 2^31 and the caller's §4
// bound holds for the sums) or in int64 for 16-bit codes (|w x| < 2^31 per product, int64 sums). A plain loop the compiler vectorizes for AVX2
// (16 columns per step); compiled with -mavx2 and only called when the CPU reports AVX2. No
// includes with inline code (requant.h explains why).
#include "depthwise.h"

namespace fixpoint::xk {

void depthwise_row_s16_avx2(int32_t* acc, const int16_t* x, int64_t n, int32_t w) {
  for (int64_t i = 0; i < n; ++i) acc[i] += w * x[i];
}

void depthwise_row_s32_avx2(int64_t* acc, const int32_t* x, int64_t n, int64_t w) {
  for (int64_t i = 0; i < n; ++i) acc[i] += w * x[i];
}

}  // namespace fixpoint::xk
