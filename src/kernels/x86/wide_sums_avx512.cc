// add_shifted_s32_avx512 (requant.h): the int64 sums of 16-bit layers, eight per step (their
// (13), requant_row_s64_avx512, is in requant_avx512.cc). Compiled with -mavx512f; only called
// when the CPU reports AVX-512.
#include <immintrin.h>

#include "requant.h"

namespace fixpoint::xk {

void add_shifted_s32_avx512(int64_t* sum, const int32_t* acc, int64_t count, int shift) {
  const __m128i cnt = _mm_cvtsi32_si128(shift);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m512i a = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i)));
    __m512i s = _mm512_loadu_si512(sum + i);
    _mm512_storeu_si512(sum + i, _mm512_add_epi64(s, _mm512_sll_epi64(a, cnt)));
  }
  for (; i < count; ++i) sum[i] += static_cast<int64_t>(acc[i]) * (int64_t{1} << shift);
}

void byte_plane_sums_avx512(int64_t* sum, const int32_t* const* acc, const int* shift, int n, int64_t count) {
  __m128i cnt[4];
  for (int j = 0; j < n; ++j) cnt[j] = _mm_cvtsi32_si128(shift[j]);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m512i s = _mm512_setzero_si512();
    for (int j = 0; j < n; ++j) {
      __m512i a = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc[j] + i)));
      s = _mm512_add_epi64(s, _mm512_sll_epi64(a, cnt[j]));
    }
    _mm512_storeu_si512(sum + i, s);
  }
  for (; i < count; ++i) {
    int64_t s = 0;
    for (int j = 0; j < n; ++j) s += static_cast<int64_t>(acc[j][i]) * (int64_t{1} << shift[j]);
    sum[i] = s;
  }
}

}  // namespace fixpoint::xk
