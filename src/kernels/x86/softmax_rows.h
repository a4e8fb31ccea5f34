// The two per-element loops of the integer Softmax's table path (softmax_fast.cc) on a row
// along the last axis of 8-bit codes, vectorized: (24)'s sum S = sum_j E[mx - x_j] and the
// lookup of (25)'s per-row table t[mx - x_j]. Integer sums and table reads: the same values as
// the scalar loops in any order. Plain integer arguments: the ISA translation unit includes no
// inline code shared with other units.
#pragma once
#include <cstdint>

namespace fixpoint::xk {

// sum_{j < len} E[mx - x_j], x_j the codes of x (int8 if is_signed, else uint8), every
// mx - x_j in [0, 255] and a valid index of E (softmax_rows_avx512.cc, AVX-512F/BW: only called
// on CPUs of the avx512vnni ISA).
int64_t softmax_sum_s8u8_avx512(const uint8_t* x, bool is_signed, int64_t len, int32_t mx, const int32_t* E);
// y_j = t[mx - x_j] for j < len, t the row table as 256 words (entries past the row's largest
// index any value; its values within y's type: 1 or 2 bytes per y, the words' low byte for 1),
// under the same conditions on the indices.
void softmax_lookup_s8u8_avx512(const uint8_t* x, bool is_signed, int64_t len, int32_t mx, const uint16_t* t, void* y,
                                int y_bytes);

}  // namespace fixpoint::xk
