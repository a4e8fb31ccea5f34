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

// N outputs from row + ow of each of R output rows (input rows row_step apart, outputs y_step),
// each window's taps (offsets taps[0, count) from its output's column) kept in registers in the
// reference's order (kh, then kw; the first tap's value as the start, as keep(low, v) is v): one
// load per tap and one store, where a pass per tap over the row loaded and stored the row every
// time (ResNet-18's MaxPool on one thread: float 0.47 -> 0.35 ms, int8 codes 0.22 -> 0.19).
// GCC's vectors of N elements, so the same code is one AVX-512 vector, two AVX2 ones or four SSE
// ones; keep() per lane. R rows at once: each window's chain of keeps is serial, so one row at a
// time waited on its latency.
template <typename T, int N, int R>
inline void pool_run(const T* row, int64_t row_step, const int64_t* taps, int64_t count, T* y, int64_t y_step) {
  typedef T Vec __attribute__((vector_size(N * sizeof(T))));
  Vec acc[R];
  for (int r = 0; r < R; ++r) __builtin_memcpy(&acc[r], row + r * row_step + taps[0], sizeof(Vec));
  for (int64_t t = 1; t < count; ++t)
    for (int r = 0; r < R; ++r) {
      Vec v;
      __builtin_memcpy(&v, row + r * row_step + taps[t], sizeof v);
      if constexpr (std::is_floating_point_v<T>)
        acc[r] = ((v > acc[r]) | ((v != v) & (acc[r] == acc[r]))) ? v : acc[r];  // keep(acc, v) per lane
      else
        acc[r] = v > acc[r] ? v : acc[r];  // a max GCC recognizes (pmaxub, pmaxsw)
    }
  for (int r = 0; r < R; ++r) __builtin_memcpy(y + r * y_step, &acc[r], sizeof(Vec));
}

// pool_run over the columns of R output rows from oh.
template <typename T, int R>
inline void pool_rows(const fixpoint::fk::PoolPlane& g, const T* buf, const int64_t* taps, int64_t count, T* yp,
                      int64_t oh) {
  const T* row = buf + oh * g.sy * g.Wq;
  T* y = yp + oh * g.OW;
  const int64_t rs = g.sy * g.Wq;
  int64_t ow = 0;
  constexpr int N = 64 / sizeof(T);  // 64 bytes a step, then halves down to an eighth
  for (; ow + N <= g.OW; ow += N) pool_run<T, N, R>(row + ow, rs, taps, count, y + ow, g.OW);
  if (ow + N / 2 <= g.OW) pool_run<T, N / 2, R>(row + ow, rs, taps, count, y + ow, g.OW), ow += N / 2;
  if (ow + N / 4 <= g.OW) pool_run<T, N / 4, R>(row + ow, rs, taps, count, y + ow, g.OW), ow += N / 4;
  if (N >= 16 && ow + N / 8 <= g.OW)
    pool_run<T, (N >= 16 ? N / 8 : 1), R>(row + ow, rs, taps, count, y + ow, g.OW), ow += N / 8;
  for (; ow < g.OW; ++ow) pool_run<T, 1, R>(row + ow, rs, taps, count, y + ow, g.OW);
}

// Windows of up to this many taps run pool_run (their offsets in an array on the stack).
constexpr int64_t kMaxTaps = 64;

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
  int64_t taps[kMaxTaps];  // tap (kh, kw)'s offset from its output row's first phase row
  const int64_t count = g.KH * g.KW;
  if (count <= kMaxTaps)
    for (int64_t kh = 0, t = 0; kh < g.KH; ++kh)
      for (int64_t kw = 0; kw < g.KW; ++kw, ++t)
        taps[t] = ((kw * g.dw % g.sx) * g.Hp + kh * g.dh) * g.Wq + kw * g.dw / g.sx;
  int64_t oh = 0;
  if (count <= kMaxTaps) {  // whole windows in registers, four rows at once
    for (; oh + 4 <= g.OH; oh += 4) pool_rows<T, 4>(g, buf, taps, count, yp, oh);
    for (; oh < g.OH; ++oh) pool_rows<T, 1>(g, buf, taps, count, yp, oh);
  }
  for (; oh < g.OH; ++oh) {
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
