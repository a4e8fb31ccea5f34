// The float microkernels written once over a vector type V, instantiated by each ISA's
// translation unit (f32_kernels_scalar.cc, f32_kernels_avx2.cc) inside an anonymous namespace.
// V provides: Reg, W (lanes), NR (the GEMM tile's columns, a multiple of W), zero(), load(p), load_strided(p, s), set1(v), fma(a, b, c) = a*b+c
// rounded once, store(p, r), relu(r) = ref::ReluOp per lane (x < 0 ? +0 : x: NaN and -0 kept). Every output element is the chain (F1) of f32_kernels.h.
// The TU includes <algorithm>, <cmath>, <type_traits> and ../reference/unary_ops.h before the anonymous namespace.
using fixpoint::fk::DwPlane;
using fixpoint::fk::kMR;

// Indirect B rows are prefetched this many k ahead (six input channels of a 3x3 conv). A tile's
// rows of one k are far apart (a channel plane each), more streams than the hardware prefetchers
// follow; where the phase planes outgrow the caches (Zero-DCE at 384 x 384: 38 MB for 64
// channels) the first panel of every column block waited on each row: e7 (64 -> 24 channels)
// 51 -> 28 ms at one thread, OCR det's 3x3 convs at 160 x 160 0.6x, ResNet-18 unchanged (its
// planes stay in L2). 27 ahead: 0.93-1.0x of this, 90: 1.04-1.10x.
constexpr int64_t kPrefetchK = 54;

// B rows of a tile: packed panel rows (b + k * NR) or an indirection list (rows[k]).
template <int NR>
struct PackedRows {
  const float* b;
  const float* operator[](int64_t k) const { return b + k * NR; }
};
struct IndirectRows {
  const float* const* rows;
  int64_t shift;
  const float* operator[](int64_t k) const { return rows[k] + shift; }
};

// Lanes of r whose bit is set in mask, stored to p, p + 1, ... (the tables' store_compressed
// where they have one).
template <class V>
void store_lanes(float* p, uint32_t mask, typename V::Reg r) {
  if constexpr (requires { V::store_compressed(p, mask, r); }) {
    V::store_compressed(p, mask, r);
  } else {
    float t[V::W];
    V::store(t, r);
    for (int l = 0; l < V::W; ++l)
      if (mask >> l & 1) *p++ = t[l];
  }
}

// One tile of MR = kMR or 2 kMR rows: rows i < kMR read the A panel a[k * kMR + i], rows
// i >= kMR the next panel a[a2 + k * kMR + i - kMR] (a2 = K * kMR: panels of one k block are
// consecutive). Every element is its own chain (F1), so the tile's height changes no bit; the
// taller tile loads each B row once for twice the FMAs (AVX-512: 24 accumulators).
template <class V, int MR, class Rows>
void gemm_tile(int64_t K, const float* a, Rows b, const float* row_bias, bool accumulate, float* c, int64_t ldc, int mr,
               int nr, const fixpoint::fk::VirtualColumns* vc = nullptr) {
  constexpr int NR = V::NR, NV = NR / V::W;
  const int64_t a2 = K * kMR;
  typename V::Reg acc[MR][NV];
  if (!accumulate) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
      for (int j = 0; j < NV; ++j) acc[i][j] = V::zero();
  } else if (mr == MR && nr == NR) {  // continue the chains from C (a previous K block)
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NV; ++j) acc[i][j] = V::load(c + i * ldc + j * V::W);
  } else {
    float tile[MR * NR] = {};
    for (int i = 0; i < mr; ++i)
      for (int j = 0; j < nr; ++j) tile[i * NR + j] = c[i * ldc + j];
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NV; ++j) acc[i][j] = V::load(tile + i * NR + j * V::W);
  }
  for (int64_t k = 0; k < K; ++k) {
    const float* row = b[k];
    // The A panels stream from memory on deep layers (ResNet-18's 7x7 layers: 9.4 MB of weights
    // each); the hardware prefetchers fell behind: 1,536 floats (6 KiB, 256 k) ahead,
    // layer4's 3x3 convs 1.35 -> 1.17 ms on one thread (384 ahead: 1.20, 768: 1.18).
    __builtin_prefetch(a + k * kMR + 1536);
    if (MR > kMR) __builtin_prefetch(a + a2 + k * kMR + 1536);
    if constexpr (std::is_same_v<Rows, IndirectRows>) {  // a row's NR floats: its first and last lines
      const float* pf = b[std::min<int64_t>(k + kPrefetchK, K - 1)];
      __builtin_prefetch(pf);
      __builtin_prefetch(pf + NR - 1);
    }
    typename V::Reg bv[NV];
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) bv[j] = V::load(row + j * V::W);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      typename V::Reg av = V::set1(i < kMR ? a[k * kMR + i] : a[a2 + k * kMR + i - kMR]);
#pragma GCC unroll 16
      for (int j = 0; j < NV; ++j) acc[i][j] = V::fma(av, bv[j], acc[i][j]);
    }
  }
  if (row_bias)  // y = acc + b, after the chain (as the reference adds its bias)
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      typename V::Reg bi = V::set1(i < mr ? row_bias[i] : 0.0f);
#pragma GCC unroll 16
      for (int j = 0; j < NV; ++j) acc[i][j] = V::add(acc[i][j], bi);
    }
  if (vc) {  // each vector's outputs as one run (VirtualColumns)
    if (vc->relu)
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
        for (int j = 0; j < NV; ++j) acc[i][j] = V::relu(acc[i][j]);
    constexpr uint32_t lanes = (1u << V::W) - 1;
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) {
      const uint32_t m = vc->columns >> (j * V::W) & lanes;
      if (!m) continue;
      float* dst = c + vc->first + __builtin_popcount(vc->columns & ((1u << (j * V::W)) - 1));
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i)
        if (i < mr) store_lanes<V>(dst + i * ldc, m, acc[i][j]);
    }
    return;
  }
  if (mr == MR && nr == NR) {
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NV; ++j) V::store(c + i * ldc + j * V::W, acc[i][j]);
    return;
  }
  float tile[MR * NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) V::store(tile + i * NR + j * V::W, acc[i][j]);
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) c[i * ldc + j] = tile[i * NR + j];
}

template <class V>
void gemm_packed(int64_t K, const float* a, const float* b, float* c, int64_t ldc, int mr, int nr) {
  gemm_tile<V, kMR>(K, a, PackedRows<V::NR>{b}, nullptr, false, c, ldc, mr, nr);
}

// The tile of the fewest rows, in steps of two, that covers mr <= MaxMR: a layer whose channels
// are not a multiple of the tile's (64 = 5 x 12 + 4, 128 = 10 x 12 + 8) computes its last rows
// with a shorter tile instead of zero rows (ResNet-18: 66 rows for 64 channels, 132 for 128).
// Rows are chains of their own (F1), so the tile's height changes no bit.
template <class V, int MaxMR>
void gemm_indirect_rows(int64_t K, const float* a, const float* const* rows, int64_t shift, const float* row_bias,
                        bool accumulate, float* c, int64_t ldc, int mr, int nr,
                        const fixpoint::fk::VirtualColumns* vc) {
  if constexpr (MaxMR > 2)
    if (mr <= MaxMR - 2)
      return gemm_indirect_rows<V, MaxMR - 2>(K, a, rows, shift, row_bias, accumulate, c, ldc, mr, nr, vc);
  gemm_tile<V, MaxMR>(K, a, IndirectRows{rows, shift}, row_bias, accumulate, c, ldc, mr, nr, vc);
}

template <class V>
void gemm_indirect(int64_t K, const float* a, const float* const* rows, int64_t shift, const float* row_bias,
                   bool accumulate, float* c, int64_t ldc, int mr, int nr, const fixpoint::fk::VirtualColumns* vc) {
  gemm_indirect_rows<V, kMR>(K, a, rows, shift, row_bias, accumulate, c, ldc, mr, nr, vc);
}

// Two consecutive panels in one 2 kMR-row tile (tables with the registers for it: AVX-512).
template <class V>
void gemm_indirect_pair(int64_t K, const float* a, const float* const* rows, int64_t shift, const float* row_bias,
                        bool accumulate, float* c, int64_t ldc, int mr, int nr,
                        const fixpoint::fk::VirtualColumns* vc) {
  gemm_indirect_rows<V, 2 * kMR>(K, a, rows, shift, row_bias, accumulate, c, ldc, mr, nr, vc);
}

// The same as two kMR-row tiles (tables without the registers: 24 accumulators would spill).
template <class V>
void gemm_indirect_pair_as_two(int64_t K, const float* a, const float* const* rows, int64_t shift,
                               const float* row_bias, bool accumulate, float* c, int64_t ldc, int mr, int nr,
                               const fixpoint::fk::VirtualColumns* vc) {
  gemm_indirect<V>(K, a, rows, shift, row_bias, accumulate, c, ldc, std::min(mr, kMR), nr, vc);
  if (mr > kMR)
    gemm_indirect<V>(K, a + K * kMR, rows, shift, row_bias ? row_bias + kMR : nullptr, accumulate, c + kMR * ldc, ldc,
                     mr - kMR, nr, vc);
}

// One output element of a depthwise plane, taps outside the input skipped (the padding's zeros
// would only add +0 products, which can flip the sign of a zero sum; skipping is the rule both
// paths below share).
inline float dw_element(const DwPlane& p, int64_t oh, int64_t ow) {
  float acc = 0.0f;
  for (int64_t kh = 0; kh < p.KH; ++kh) {
    int64_t ih = oh * p.sh - p.ph + kh * p.dh;
    if (ih < 0 || ih >= p.IH) continue;
    for (int64_t kw = 0; kw < p.KW; ++kw) {
      int64_t iw = ow * p.sw - p.pw + kw * p.dw;
      if (iw < 0 || iw >= p.IW) continue;
      acc = std::fma(p.w[kh * p.KW + kw], p.x[ih * p.IW + iw], acc);
    }
  }
  return acc;
}

template <class V>
void dwconv_plane(const DwPlane& p) {
  // Interior columns [lo, hi): every kw tap reads inside the row, so a vector of W adjacent
  // output columns runs the same chain as dw_element. The margin sw - 1 keeps a strided load's
  // whole span (which may read up to sw - 1 values past its last lane) inside the row.
  int64_t lo = std::min<int64_t>((p.pw + p.sw - 1) / p.sw, p.OW);
  int64_t last = p.IW - 1 + p.pw - (p.KW - 1) * p.dw - (p.sw - 1);  // ow * sw <= last
  int64_t hi = last < 0 ? 0 : std::min<int64_t>(last / p.sw + 1, p.OW);
  hi = std::max(hi, lo);
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    float* y = p.y + oh * p.OW;
    int64_t ow = 0;
    for (; ow < lo; ++ow) y[ow] = dw_element(p, oh, ow) + p.bias;
    for (; ow + 4 * V::W <= hi; ow += 4 * V::W) {  // four vectors share each tap's broadcast
      typename V::Reg a0 = V::zero(), a1 = V::zero(), a2 = V::zero(), a3 = V::zero();
      for (int64_t kh = 0; kh < p.KH; ++kh) {
        int64_t ih = oh * p.sh - p.ph + kh * p.dh;
        if (ih < 0 || ih >= p.IH) continue;
        const float* row = p.x + ih * p.IW + ow * p.sw - p.pw;
        for (int64_t kw = 0; kw < p.KW; ++kw) {
          typename V::Reg w = V::set1(p.w[kh * p.KW + kw]);
          const float* q = row + kw * p.dw;
          a0 = V::fma(w, V::load_strided(q, p.sw), a0);
          a1 = V::fma(w, V::load_strided(q + V::W * p.sw, p.sw), a1);
          a2 = V::fma(w, V::load_strided(q + 2 * V::W * p.sw, p.sw), a2);
          a3 = V::fma(w, V::load_strided(q + 3 * V::W * p.sw, p.sw), a3);
        }
      }
      typename V::Reg b = V::set1(p.bias);
      V::store(y + ow, V::add(a0, b));
      V::store(y + ow + V::W, V::add(a1, b));
      V::store(y + ow + 2 * V::W, V::add(a2, b));
      V::store(y + ow + 3 * V::W, V::add(a3, b));
    }
    for (; ow + V::W <= hi; ow += V::W) {
      typename V::Reg acc = V::zero();
      for (int64_t kh = 0; kh < p.KH; ++kh) {
        int64_t ih = oh * p.sh - p.ph + kh * p.dh;
        if (ih < 0 || ih >= p.IH) continue;
        const float* row = p.x + ih * p.IW + ow * p.sw - p.pw;
        for (int64_t kw = 0; kw < p.KW; ++kw)
          acc = V::fma(V::set1(p.w[kh * p.KW + kw]), V::load_strided(row + kw * p.dw, p.sw), acc);
      }
      V::store(y + ow, V::add(acc, V::set1(p.bias)));
    }
    if (p.vector_tail && ow < p.OW && V::W > 1) {  // rows fully inside (no padding): every tap
      typename V::Reg acc = V::zero();
      for (int64_t kh = 0; kh < p.KH; ++kh) {
        const float* row = p.x + (oh * p.sh + kh * p.dh) * p.IW + ow * p.sw;
        for (int64_t kw = 0; kw < p.KW; ++kw)
          acc = V::fma(V::set1(p.w[kh * p.KW + kw]), V::load_strided(row + kw * p.dw, p.sw), acc);
      }
      float tail[V::W];
      V::store(tail, V::add(acc, V::set1(p.bias)));
      std::copy(tail, tail + (p.OW - ow), y + ow);
      ow = p.OW;
    }
    for (; ow < p.OW; ++ow) y[ow] = dw_element(p, oh, ow) + p.bias;
  }
}

// y[i] = f(a[i] or av, b[i] or bv): restrict rows, so the loops vectorize.
template <class F>
void pointwise_binary(const float* __restrict a, float av, const float* __restrict b, float bv, float* __restrict y,
                      int64_t n, F f) {
  if (a && b)
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  else if (a)
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], bv);
  else
    for (int64_t i = 0; i < n; ++i) y[i] = f(av, b[i]);
}

template <class F>
void pointwise_unary(const float* __restrict x, float* __restrict y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

inline void pointwise(const fixpoint::fk::PointwiseStep& s) {
  using K = fixpoint::fk::PointwiseKind;
  switch (s.kind) {
    case K::kAdd: return pointwise_binary(s.a, s.av, s.b, s.bv, s.y, s.n, [](float x, float y) { return x + y; });
    case K::kSub: return pointwise_binary(s.a, s.av, s.b, s.bv, s.y, s.n, [](float x, float y) { return x - y; });
    case K::kMul: return pointwise_binary(s.a, s.av, s.b, s.bv, s.y, s.n, [](float x, float y) { return x * y; });
    case K::kDiv: return pointwise_binary(s.a, s.av, s.b, s.bv, s.y, s.n, [](float x, float y) { return x / y; });
    case K::kRelu: return pointwise_unary(s.a, s.y, s.n, fixpoint::ref::ReluOp{});
    case K::kSigmoid: return pointwise_unary(s.a, s.y, s.n, fixpoint::ref::SigmoidOp{});
    case K::kClip: {
      const float lo = s.lo, hi = s.hi;
      return pointwise_unary(s.a, s.y, s.n, [lo, hi](float x) { return fixpoint::ref::clip_value(x, lo, hi); });
    }
    case K::kAffine: {  // two roundings: the TUs build with -ffp-contract=off (no fma)
      const float m = s.bv, c = s.cv;
      return pointwise_unary(s.a, s.y, s.n, [m, c](float x) { return x * m + c; });
    }
    case K::kHardSwish: {
      const float b = s.bv, lo = s.lo, hi = s.hi, c = s.cv;
      return pointwise_unary(s.a, s.y, s.n,
                             [b, lo, hi, c](float x) { return x * fixpoint::ref::clip_value(x + b, lo, hi) / c; });
    }
  }
}

// Tanh per element (the tables without a vector form of (U1)).
inline void tanh_row(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fixpoint::ref::tanh_f32(x[i]);
}
