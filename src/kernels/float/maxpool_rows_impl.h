// The loops of maxpool_rows.h, included by each ISA's translation unit inside an anonymous
// namespace (so no instantiation is merged with another ISA's by the linker) after <cstdint>,
// <limits>, <type_traits> and maxpool_rows.h. No standard-library code for the same reason.

// Kept by max (the reference's rule for floats: a greater value, or the first NaN).
template <typename T>
inline T keep(T b, T v) {
  if constexpr (std::is_floating_point_v<T>)
    return (v > b || (v != v && b == b)) ? v : b;
  else
    return v > b ? v : b;
}

// Float rows run 16 elements a step (one AVX-512 vector, two AVX2 ones), then one by one.
constexpr int64_t kStep = 16;

// y[i] = keep(y[i], x[i]). Restrict pointers and a count by value: a store of 8-bit codes may
// alias anything, and with the row length read through a reference every iteration reloaded it.
template <typename T>
inline void keep_row(T* __restrict y, const T* __restrict x, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_floating_point_v<T>)
    for (; i + kStep <= n; i += kStep)
      for (int64_t k = 0; k < kStep; ++k) y[i + k] = keep(y[i + k], x[i + k]);
  for (; i < n; ++i) y[i] = keep(y[i], x[i]);
}

// Column j of a phase row: src[s j] (s = 1 and 2 spelled out, so that they vectorize).
template <typename T>
inline void take_columns(T* __restrict dst, const T* __restrict src, int64_t n, int64_t s) {
  int64_t j = 0;
  if (s == 1) {
    for (; j + kStep <= n; j += kStep)
      for (int64_t k = 0; k < kStep; ++k) dst[j + k] = src[j + k];
  } else if (s == 2) {
    for (; j + kStep <= n; j += kStep)
      for (int64_t k = 0; k < kStep; ++k) dst[j + k] = src[2 * (j + k)];
  }
  for (; j < n; ++j) dst[j] = src[s * j];
}

template <typename T>
inline void fill_row(T* __restrict p, int64_t n, T v) {
  for (int64_t i = 0; i < n; ++i) p[i] = v;
}

// The plane rewritten once into buf, padded with the lowest value (-Inf for floats: no tap it
// replaces changes a max, and a window of padding only gives the reference's empty-window
// value), as its sx column phases, so that every tap (kh, kw) of an output row is one contiguous
// run of a phase row, ow + (kw dw) / sx of phase (kw dw) % sx; the output row is the first tap's
// run, then kept against the others in the reference's window order (kh, then kw).
template <typename T>
void pool_plane(const fixpoint::fk::PoolPlane& g, const T* xp, T* yp, T* buf) {
  const T low = std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  for (int64_t r = 0; r < g.Hp; ++r) {
    int64_t ih = r - g.pt;
    for (int64_t q = 0; q < g.sx; ++q) {
      T* dst = buf + (q * g.Hp + r) * g.Wq;
      if (ih < 0 || ih >= g.H) {
        fill_row(dst, g.Wq, low);
        continue;
      }
      // Column j of phase q is padded column q + sx j, input column q + sx j - pl: [lo, hi).
      int64_t lo = (g.pl - q + g.sx - 1) / g.sx, hi = (g.W + g.pl - q + g.sx - 1) / g.sx;
      lo = lo < 0 ? 0 : lo > g.Wq ? g.Wq : lo;
      hi = hi < lo ? lo : hi > g.Wq ? g.Wq : hi;
      fill_row(dst, lo, low);
      take_columns(dst + lo, xp + ih * g.W + q + g.sx * lo - g.pl, hi - lo, g.sx);
      fill_row(dst + hi, g.Wq - hi, low);
    }
  }
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    T* yr = yp + oh * g.OW;
    for (int64_t kh = 0; kh < g.KH; ++kh)
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        const T* xr = buf + ((kw * g.dw % g.sx) * g.Hp + oh * g.sy + kh * g.dh) * g.Wq + kw * g.dw / g.sx;
        if (kh == 0 && kw == 0)  // keep(low, v) is v for every v (a NaN replaces -Inf; -Inf keeps -Inf)
          take_columns(yr, xr, g.OW, 1);
        else
          keep_row(yr, xr, g.OW);
      }
  }
}
