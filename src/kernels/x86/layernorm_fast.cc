// Optimized run step of integer LayerNormalization and InstanceNormalization (26)-(30),
// docs/arithmetic.md §5.14: the same integers as the reference's normalize_rows, read from and
// written to the codes directly (no int64 copies) and with 64-bit products where they are exact.
//
// Bounds, for 8/16-bit input codes and rows of N <= 1024 (else the reference runs):
//  - d_i = N q_i - S1: |d_i| <= N (q_max - q_min) < N 2^16, so (26b)'s u is 0 and d_i is exact
//    in int64; V = sum d_i^2 < N^3 2^32 <= 2^62.
//  - r (28) = ISQRT(floor(2^(2P+16) N / W)) < 2^63 (the ISQRT of a value below 2^126), and
//    W >= 2^16 V, so by Cauchy-Schwarz |t_i| = |d_i| r <= 2^P sqrt(N) <= 2^55 (P's definition):
//    t (29) is an int64 product.
//  - (30)'s sign m t is one 64 x 64 -> 128-bit product; the rest is the reference's 128-bit
//    RSH with the same operands, so the same codes.
// Rows are independent, so any thread split gives the same codes.
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "../reference/common.h"
#include "elementwise_fast.h"
#include "fixpoint/parallel.h"

namespace fixpoint::xk {

namespace {

template <typename Affine>
bool normalize_fast(qref::QContext& c, const params::Normalize& p, int64_t rows, int64_t N, Affine affine) {
  const Tensor& x = *c.in[0];
  if (!narrow(x.dtype()) || !narrow(c.out_q[0].type) || N < 1 || N > 1024) return false;
  Tensor& y = c.output(0, x.shape(), false);  // every element is written
  const int64_t *m = p.mult.data<int64_t>(), *n = p.shift.data<int64_t>(), *sign = p.sign.data<int64_t>(),
                *B = p.beta.data<int64_t>();
  int log2n = 0;
  while ((int64_t{1} << log2n) < N) ++log2n;
  const int P = (110 - log2n) / 2;
  const __int128 eps_term = static_cast<__int128>(N) * N * N * p.eps_fx;  // N^3 EPS_u, u = 0
  const fx::Range r = fx::range_of(c.out_q[0].type);
  const int64_t zx = c.in_q[0].zero_point, zy = c.out_q[0].zero_point;
  // Per gamma/beta index j, (30) as (M_j t + K_j) >> s_j: M_j = sign_j m_j, s_j = n_j + P and
  // K_j = B_j 2^(s_j - 16) + 2^(s_j - 1) (RSH's rounding term (4)); rsh128 itself where s_j is
  // outside (0, 126).
  const int64_t per = p.mult.numel();
  std::vector<int64_t> M(static_cast<size_t>(per)), S(static_cast<size_t>(per));
  std::vector<__int128> K(static_cast<size_t>(per));
  bool plain = true;
  for (int64_t j = 0; j < per; ++j) {
    M[j] = sign[j] * m[j];
    S[j] = n[j] + P;
    plain = plain && S[j] > 16 && S[j] < 126;
    if (plain) K[j] = (static_cast<__int128>(B[j]) << (S[j] - 16)) + (static_cast<__int128>(1) << (S[j] - 1));
  }
  qref::visit_int(x.dtype(), [&](auto tx) {
    qref::visit_int(y.dtype(), [&](auto ty) {
      using X = decltype(tx);
      using Y = decltype(ty);
      const X* px = x.data<X>();
      Y* py = y.data<Y>();
      parallel_for(rows, c.threads, [&](int64_t row) {
        const X* xr = px + row * N;
        Y* yr = py + row * N;
        int64_t S1 = 0;  // (26)
        for (int64_t i = 0; i < N; ++i) S1 += static_cast<int64_t>(xr[i]) - zx;
        int64_t V = 0;  // (27)
        for (int64_t i = 0; i < N; ++i) {
          const int64_t d = N * (static_cast<int64_t>(xr[i]) - zx) - S1;
          V += d * d;
        }
        const __int128 W = static_cast<__int128>(V) * 65536 + eps_term;
        const int64_t rr = W > 0 ? static_cast<int64_t>(fx::isqrt128((static_cast<__int128>(N) << (2 * P + 16)) / W)) : 0;
        for (int64_t i = 0; i < N; ++i) {
          const int64_t j = affine(row, i), t = (N * (static_cast<int64_t>(xr[i]) - zx) - S1) * rr;  // (29)
          const __int128 v = plain ? (static_cast<__int128>(M[j]) * t + K[j]) >> S[j]  // (30)
                                   : fx::rsh128(static_cast<__int128>(M[j]) * t + (static_cast<__int128>(B[j]) << (S[j] - 16)),
                                                static_cast<int>(S[j]));
          yr[i] = static_cast<Y>(v < r.lo - zy ? r.lo : (v > r.hi - zy ? r.hi : static_cast<int64_t>(v) + zy));
        }
      });
    });
  });
  return true;
}

}  // namespace

bool layernorm_fast(qref::QContext& c) {
  const Tensor& x = *c.in[0];
  const auto& p = c.op.as<params::LayerNorm>();
  if (x.rank() < 1) return false;
  const int64_t N = x.dim(-1), per = p.mult.numel();
  if (N < 1 || (per != 1 && per != N)) return false;  // the reference names the mismatch
  return normalize_fast(c, p, x.numel() / N, N, [per](int64_t, int64_t i) { return per == 1 ? 0 : i; });
}

bool instancenorm_fast(qref::QContext& c) {
  const Tensor& x = *c.in[0];
  const auto& p = c.op.as<params::InstanceNorm>();
  if (x.rank() < 3) return false;
  const int64_t C = x.dim(1), rows = x.dim(0) * C;
  if (rows < 1 || p.mult.numel() != C) return false;
  return normalize_fast(c, p, rows, x.numel() / rows, [C](int64_t row, int64_t) { return row % C; });
}

}  // namespace fixpoint::xk
