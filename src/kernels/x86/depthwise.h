// One tap of the depthwise fast path over a contiguous run of output columns, per ISA:
// acc[i] += w * x[i] for i < n, in int32 (8-bit codes) or int64 (16-bit codes) (conv_gemm.cc; the
// generic build vectorizes it only for SSE2).
#pragma once
#include <cstdint>

namespace fixpoint::xk {

using DepthwiseRowFn = void (*)(int32_t* acc, const int16_t* x, int64_t n, int32_t w);
void depthwise_row_s16_avx2(int32_t* acc, const int16_t* x, int64_t n, int32_t w);
using DepthwiseRow64Fn = void (*)(int64_t* acc, const int32_t* x, int64_t n, int64_t w);
void depthwise_row_s32_avx2(int64_t* acc, const int32_t* x, int64_t n, int64_t w);

}  // namespace fixpoint::xk
