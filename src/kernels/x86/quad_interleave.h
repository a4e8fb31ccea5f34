// The channel-quad words of the implicit-GEMM convolution's input planes (conv_implicit.cc):
// four channels' 8-bit codes of one pixel in one 32-bit word, shifted into [0, 255]. Plain
// integer arguments: the ISA translation unit includes no inline code shared with other units.
#pragma once
#include <cstdint>

namespace fixpoint::xk {

// out[4 i + j] = src[j][i sx] ^ flip (0 where src[j] is null) for pixels i < n, reading no other
// byte of src and writing no other of out; sx is 1 or 2 (quad_interleave_avx512.cc, AVX-512F/BW:
// only called on CPUs of the avx512vnni ISA, which have them).
void quad_interleave_avx512(const uint8_t* const src[4], int sx, uint8_t flip, int64_t n, uint8_t* out);

// The byte planes of 16-bit codes (the same ISA): u = x[i] ^ flip, hi[i] = u >> 8, lo[i] = u & 255
// for i < n.
void split_bytes_avx512(const uint16_t* x, uint16_t flip, int64_t n, uint8_t* hi, uint8_t* lo);

}  // namespace fixpoint::xk
