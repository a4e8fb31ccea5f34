// Vector kernels of a table op's curve (20a, fixpoint/table_curve.h), named by input code type,
// output width and ISA.
#pragma once
#include <cstdint>

#include "fixpoint/table_curve.h"

namespace fixpoint::xk {

// y[i] = the 8-bit output code (u8 or s8, as bytes) of the 16-bit input code x[i] by (20a), or
// table[x[i] - lo] where the curve lies near a rounding boundary (and for the last n % 16).
void table_curve_s16_x8_avx512(const int16_t* x, uint8_t* y, int64_t n, const fx::TableCurve& c, const uint8_t* table,
                               int64_t lo);
// The same on eight codes per step (table_curve_avx2.cc, AVX2); the same codes.
void table_curve_s16_x8_avx2(const int16_t* x, uint8_t* y, int64_t n, const fx::TableCurve& c, const uint8_t* table,
                             int64_t lo);

}  // namespace fixpoint::xk
