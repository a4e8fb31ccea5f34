// Horizontal sum of eight int32 lanes, for the AVX2 and AVX-512 GEMM translation units. `static`
// on purpose: each TU compiles its own copy for its own ISA (no inline function shared across
// TUs compiled with different -m flags).
#pragma once
#include <immintrin.h>

#include <cstdint>

static inline int32_t hsum_epi32_256(__m256i r) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}
