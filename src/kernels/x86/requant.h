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

// The same (13) on sixteen sums per step, stored as codes of out_bytes (1 or 2) bytes at out
// (requant_avx512.cc, AVX-512F/BW/VL), with the requirements of requant_row_s32_avx2 except
// that bias + sum[i] may leave int32: the store stops before the first step of sixteen where it
// does and returns how many codes it stored (count if none does). Results must be within the
// output type's range (lo_z + z >= its lowest, hi_z + z <= its highest); sum is not written and
// nothing past sum[count - 1] or out's count codes is read or written.
using RequantStoreFn = int64_t (*)(const int32_t* sum, int64_t count, int32_t bias, int64_t m, int n, int32_t lo_z,
                                   int32_t hi_z, int32_t z, void* out, int out_bytes);
int64_t requant_store_s32_avx512(const int32_t* sum, int64_t count, int32_t bias, int64_t m, int n, int32_t lo_z,
                                 int32_t hi_z, int32_t z, void* out, int out_bytes);

// The same (13) across channels, for outputs whose channel varies fastest (a MatMul's rows):
// out[i ldo + j] = SAT_[lo_z, hi_z](RSH((bias[j] + sum[j lds + i]) · m[j], n[j])) + z for
// j < nj, i < ni, as codes of out_bytes (1 or 2) bytes (requant_avx512.cc, AVX-512F/BW/VL):
// sixteen channels a step, gathered from the channel-major sums, with per-lane multipliers and
// shifts. Requires, per channel, bias[j] + sum within int32 (a non-wide layer's, §4),
// 0 < m[j] < 2^31, 1 <= n[j] <= 62, and results within the output type's range.
using RequantChannelsFn = void (*)(const int32_t* sum, int64_t lds, int64_t nj, int64_t ni, const int32_t* bias,
                                   const int32_t* m, const int32_t* n, int32_t lo_z, int32_t hi_z, int32_t z, void* out,
                                   int64_t ldo, int out_bytes);
void requant_channels_s32_avx512(const int32_t* sum, int64_t lds, int64_t nj, int64_t ni, const int32_t* bias,
                                 const int32_t* m, const int32_t* n, int32_t lo_z, int32_t hi_z, int32_t z, void* out,
                                 int64_t ldo, int out_bytes);

// The same (13) for channel-major outputs, a row of ni sums per channel (a conv's output
// positions): out[j ldo + i] = SAT_[lo_z, hi_z](RSH((bias[j] + sum[j lds + i]) · m[j], n[j])) + z
// for j < nj, i < ni, in one call (requant_avx512.cc; calls of 64 sums a channel had spent as much
// on the call as on the sums). Requires what requant_channels_s32_avx512 does.
void requant_rows_s32_avx512(const int32_t* sum, int64_t lds, int64_t nj, int64_t ni, const int32_t* bias,
                             const int32_t* m, const int32_t* n, int32_t lo_z, int32_t hi_z, int32_t z, void* out,
                             int64_t ldo, int out_bytes);

// The same (13) from position-major sums into channel-major outputs (a conv's pixel-form GEMM,
// gemm_u8s8.h): out[j ldo + i] = SAT_[lo_z, hi_z](RSH((bias[j] + sum[i lds + j]) · m[j], n[j])) + z
// for j < nj, i < ni, transposed in registers (requant_avx512.cc). Requires what
// requant_channels_s32_avx512 does.
void requant_transposed_s32_avx512(const int32_t* sum, int64_t lds, int64_t nj, int64_t ni, const int32_t* bias,
                                   const int32_t* m, const int32_t* n, int32_t lo_z, int32_t hi_z, int32_t z,
                                   void* out, int64_t ldo, int out_bytes);

// The same for a wide layer on the two byte planes of 16-bit codes (the pixel form's sums of
// each, position-major): a = 2^8 hi[i lds + j] + lo[i lds + j] + bias[j] in int64, then (13) as
// requant_row_s64_avx512 computes it with per-channel m[j] and n[j], stored channel-major as
// codes of out_bytes (1 or 2) bytes. Requires, per channel, |a| < 2^62, 0 < m[j] < 2^31,
// 33 <= n[j] <= 93, lo_z and hi_z within +-2^62, and results within the output type's range.
void requant_transposed_planes_avx512(const int32_t* hi, const int32_t* lo, int64_t lds, int64_t nj, int64_t ni,
                                      const int64_t* bias, const int64_t* m, const int64_t* n, int64_t lo_z,
                                      int64_t hi_z, int64_t z, void* out, int64_t ldo, int out_bytes);
// The same for a non-wide layer, whose accumulator a is within int32 (§4): a = 2^8 hi + lo + bias
// computed mod 2^32 (bias[j] the channel's bias with the z_u term, mod 2^32), which is a itself,
// then (13) as requant_transposed_s32_avx512, with its requirements on m, n, lo_z and hi_z.
void requant_transposed_planes_s32_avx512(const int32_t* hi, const int32_t* lo, int64_t lds, int64_t nj, int64_t ni,
                                          const int32_t* bias, const int32_t* m, const int32_t* n, int32_t lo_z,
                                          int32_t hi_z, int32_t z, void* out, int64_t ldo, int out_bytes);

// (5) for float32 inputs (quantize_avx2.cc, AVX2): out[i] = SAT_[lo, hi](R(x[i] / scale) + z)
// exactly as fx::quantize, for i < count rounded down to 4; returns how many it did. Requires
// lo, hi and z within int32 (8/16-bit codes).
int64_t quantize_row_f32_avx2(const float* x, int64_t count, double scale, int64_t zero_point, int64_t lo, int64_t hi,
                              int32_t* out);
// The same on AVX-512 (quantize_avx512.cc: the quotient by a product where that gives the same
// codes, see there), for i < count rounded down to 16, stored as codes of out_bytes (1 or 2)
// bytes; returns how many it did. Requires lo, hi and z within the output type's range.
int64_t quantize_row_f32_avx512(const float* x, int64_t count, double scale, int64_t zero_point, int64_t lo, int64_t hi,
                                void* out, int out_bytes);

// The int64 sums of 16-bit layers (wide_sums_avx512.cc, AVX-512F; callers check the CPU):
// sum[i] += acc[i] * 2^shift (0 <= shift <= 31) for i < count;
void add_shifted_s32_avx512(int64_t* sum, const int32_t* acc, int64_t count, int shift);
// sum[i] = sum_j acc_j[i] * 2^shift_j over the n (<= 4) int32 sums of a layer's byte planes
// (BytePlanes): one pass, no zeroed buffer.
void byte_plane_sums_avx512(int64_t* sum, const int32_t* const* acc, const int* shift, int n, int64_t count);
// and (13) as requantize_wide computes it (requant_avx512.cc, AVX-512F/BW/VL: only called on CPUs
// of the avx512vnni ISA): sum[i] = SAT_[lo_z, hi_z](RSH((bias + sum[i]) · m, n)) + z in place for
// i < count rounded down to 8; returns how many it did. Requires
// |bias + sum[i]| < 2^63, 0 < m < 2^31 and 33 <= n <= 93 (the product of up to 94 bits is taken
// as two 32 x 32-bit products, so no lane needs 128 bits).
using RequantRow64Fn = int64_t (*)(int64_t* sum, int64_t count, int64_t bias, int64_t m, int n, int64_t lo_z,
                                   int64_t hi_z, int64_t z);
int64_t requant_row_s64_avx512(int64_t* sum, int64_t count, int64_t bias, int64_t m, int n, int64_t lo_z, int64_t hi_z,
                               int64_t z);

}  // namespace fixpoint::xk
