// The fast MaxPool's plane loop for 8- and 16-bit codes on the most common window, 3 x 3 at stride 2 with
// at most one padded row and column on each leading edge (ResNet's stem), on AVX-512BW
// (maxpool_rows.h). Per output row: the three input rows' max (64 codes a step), written after
// the leading pad into a row padded with the lowest code; then each output is the max of padded
// columns 2 ow, 2 ow + 1, 2 ow + 2: 64 padded columns read as 32 words, the even columns are
// their low bytes (vpmovwb), the odd ones their high bytes, and 2 ow + 2 the even columns of the
// read two columns on (16-bit codes: 32 codes a step, the pairs read as dwords). Max of codes is exact and order-free, and a padded position holds the
// lowest code, which changes no max (a window of padding only gives the lowest code, as the
// reference). ResNet-18's 8-bit MaxPool (64 x 112 x 112 codes) on one thread: 0.25 -> 0.065 ms
// against the phase-plane loop of maxpool_rows_impl.h, which the other windows keep. Compiled
// with -mavx512f -mavx512bw -mavx512vl; only used on CPUs of the avx512vnni ISA.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "maxpool_rows.h"

namespace fixpoint::fk {
namespace {

// The operations on T's lanes: L codes a register.
template <typename T>
struct Lanes {
  static constexpr int64_t L = 64 / sizeof(T);
  static __m512i set1(T v) { return sizeof(T) == 1 ? _mm512_set1_epi8(static_cast<char>(v)) : _mm512_set1_epi16(v); }
  static __m512i max(__m512i a, __m512i b) {
    if constexpr (sizeof(T) == 1) return std::is_signed_v<T> ? _mm512_max_epi8(a, b) : _mm512_max_epu8(a, b);
    else return std::is_signed_v<T> ? _mm512_max_epi16(a, b) : _mm512_max_epu16(a, b);
  }
  static __m256i max(__m256i a, __m256i b) {
    if constexpr (sizeof(T) == 1) return std::is_signed_v<T> ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
    else return std::is_signed_v<T> ? _mm256_max_epi16(a, b) : _mm256_max_epu16(a, b);
  }
  static uint64_t first(int64_t n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }
  static __m512i load(uint64_t k, const T* p) {
    if constexpr (sizeof(T) == 1) return _mm512_maskz_loadu_epi8(k, p);
    else return _mm512_maskz_loadu_epi16(static_cast<__mmask32>(k), p);
  }
  static void store(T* p, uint64_t k, __m512i v) {
    if constexpr (sizeof(T) == 1) _mm512_mask_storeu_epi8(p, k, v);
    else _mm512_mask_storeu_epi16(p, static_cast<__mmask32>(k), v);
  }
  // The even (low) and odd (high) codes of L / 2 pairs.
  static __m256i even(__m512i a) { return sizeof(T) == 1 ? _mm512_cvtepi16_epi8(a) : _mm512_cvtepi32_epi16(a); }
  static __m256i odd(__m512i a) {
    return sizeof(T) == 1 ? _mm512_cvtepi16_epi8(_mm512_srli_epi16(a, 8)) : _mm512_cvtepi32_epi16(_mm512_srli_epi32(a, 16));
  }
  static void store(T* p, uint64_t k, __m256i v) {
    if constexpr (sizeof(T) == 1) _mm256_mask_storeu_epi8(p, static_cast<__mmask32>(k), v);
    else _mm256_mask_storeu_epi16(p, static_cast<__mmask16>(k), v);
  }
};

constexpr int64_t kMaxWidth = kPool3x3s2MaxWidth;

// Requires the window kPool3x3s2MaxWidth's comment gives (plane_fn in maxpool_fast.cc checks it).
template <typename T>
void pool_3x3s2(const PoolPlane& g, const T* x, T* y, T*) {
  using V = Lanes<T>;
  constexpr int64_t L = V::L;
  const __m512i low = V::set1(std::numeric_limits<T>::lowest());
  // u: padded column j = input column j - pl; lowest before, after, and in the slack the last
  // step reads (up to column 2 OW + L + 1).
  alignas(64) T u[kMaxWidth + 192];
  for (int64_t j = 0; j < kMaxWidth + 192; j += L) _mm512_store_si512(u + j, low);
  T* v = u + g.pl;
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    const int64_t ih0 = oh * 2 - g.pt;
    for (int64_t c = 0; c < g.W; c += L) {
      const uint64_t k = V::first(g.W - c);
      __m512i m = low;
      for (int64_t ih = ih0; ih < ih0 + 3; ++ih)
        if (ih >= 0 && ih < g.H) m = V::max(m, V::load(k, x + ih * g.W + c));
      V::store(v + c, k, m);
    }
    T* out = y + oh * g.OW;
    for (int64_t ow = 0; ow < g.OW; ow += L / 2) {
      const __m512i a = _mm512_loadu_si512(u + 2 * ow), b = _mm512_loadu_si512(u + 2 * ow + 2);
      const int64_t n = g.OW - ow;
      V::store(out + ow, V::first(n < L / 2 ? n : L / 2), V::max(V::max(V::even(a), V::odd(a)), V::even(b)));
    }
  }
}

}  // namespace

const PoolPlaneFn<uint8_t> kPoolPlane3x3s2U8Avx512 = pool_3x3s2<uint8_t>;
const PoolPlaneFn<int8_t> kPoolPlane3x3s2S8Avx512 = pool_3x3s2<int8_t>;
const PoolPlaneFn<uint16_t> kPoolPlane3x3s2U16Avx512 = pool_3x3s2<uint16_t>;
const PoolPlaneFn<int16_t> kPoolPlane3x3s2S16Avx512 = pool_3x3s2<int16_t>;

}  // namespace fixpoint::fk
