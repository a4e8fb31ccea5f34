// (13) RQ(a) = SAT_[lo,hi](RSH(a · m, n) + z) over a row of one output channel's int32 sums,
// vectorized (docs/arithmetic.md §3; docs/performance.md): the optimized GEMM paths' epilogue,
// bit-identical to fx::requantize where its conditions hold (requant_row in conv_gemm.cc checks
// them and runs fx::requantize elsewhere). Plain integer arguments: the ISA translation units
// include no inline code shared with other units (it could be merged with theirs by the linker).
#pragma once
#include <cstdint>

namespace fixpoint::xk {

// sum[i] = SAT_[lo_z, hi_z](RSH((bias + sum[i]) · m, n)) + z for i < count rounded down to a
// multiple of the vector width, in place; returns how many it did. Requires bias + sum[i]
// within int32, 0 < m < 2^31, 1 <= n <= 62, lo_z = lo - z and hi_z = hi - z within int32.
using RequantRowFn = int64_t (*)(int32_t* sum, int64_t count, int32_t bias, int64_t m, int n, int32_t lo_z,
                                 int32_t hi_z, int32_t z);
int64_t requant_row_s32_avx2(int32_t* sum, int64_t count, int32_t bias, int64_t m, int n, int32_t lo_z, int32_t hi_z,
                             int32_t z);

}  // namespace fixpoint::xk
