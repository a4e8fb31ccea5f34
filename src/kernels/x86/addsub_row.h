// (17) on rows of 8- or 16-bit codes, vectorized: the Add/Sub fast path's inner loop
// (elementwise_fast.cc), bit-identical to fx::sat(fx::rsh(a A + b B, L) + z_y) where its
// conditions hold. Plain integer arguments: the ISA translation unit includes no inline code
// shared with other units.
#pragma once
#include <cstdint>

namespace fixpoint::xk {

// Codes of one operand: 8- or 16-bit (bytes), signed or not, its zero point and coefficient.
struct AddSubOperand {
  const void* codes;
  int bytes;
  bool is_signed;
  int32_t zero_point;
  int64_t coef;  // A or B (with Sub's sign), |coef| < 2^55
  bool step;     // false: one code for the whole row (a broadcast operand)
};

// y[i] = SAT_[lo_z, hi_z](RSH((a_i - z_a) A + (b_i - z_b) B, L)) + z_y for i < count rounded down
// to a multiple of 8; returns how many it did. Requires 1 <= L <= 61, |a - z_a| |A| +
// |b - z_b| |B| < 2^61, lo_z = lo - z_y and hi_z = hi - z_y; y of y_bytes (1 or 2) per code.
int64_t addsub_row_avx2(const AddSubOperand& a, const AddSubOperand& b, void* y, int y_bytes, int64_t count, int L,
                        int32_t lo_z, int32_t hi_z, int32_t zy);
// The same on eight codes per step in 64-bit lanes (addsub_avx512.cc, AVX-512 F + DQ), for
// count rounded down to a multiple of 8, under the same requirements; the same integers.
int64_t addsub_row_avx512(const AddSubOperand& a, const AddSubOperand& b, void* y, int y_bytes, int64_t count, int L,
                          int32_t lo_z, int32_t hi_z, int32_t zy);
// Mul's wide (13) on sixteen codes per step (addsub_avx512.cc, AVX-512 F + DQ): y[i] =
// SAT_[lo_z, hi_z](RSH((a_i - z_a)(b_i - z_b) m, n)) + z_y, the 128-bit RSH of requantize_wide,
// for count rounded down to a multiple of 16; returns how many it did. The operands' coef are
// not used. Requires 8/16-bit codes (|a - z_a|, |b - z_b| <= 65535), 0 < m < 2^31 and n >= 1:
// then |(a - z_a)(b - z_b) m| < 2^63, exact in int64, where the RSH is (p >> n) + bit n - 1 of p
// (no rounding term to overflow) for n <= 63 and 0 beyond (|p| < 2^63 <= 2^(n - 1)).
int64_t mul_row_wide_avx512(const AddSubOperand& a, const AddSubOperand& b, void* y, int y_bytes, int64_t count, int64_t m,
                            int n, int32_t lo_z, int32_t hi_z, int32_t zy);
using AddSubRowFn = int64_t (*)(const AddSubOperand&, const AddSubOperand&, void*, int, int64_t, int, int32_t, int32_t,
                                int32_t);

}  // namespace fixpoint::xk
