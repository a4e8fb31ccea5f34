// Integer LayerNormalization (26)-(30) and InstanceNormalization (§5.19): one row routine,
// docs/arithmetic.md §5.14.
#include "../common.h"
#include "fixpoint/parallel.h"
#include "integer_kernels.h"

namespace fixpoint::qref {
namespace {

// Normalization of rows of length N (LayerNormalization: last-axis vectors; InstanceNormalization:
// (n, c) planes, docs/arithmetic.md §5.19), per row:
//   (26) S1 = sum q,  d_i = N q_i - S1                       (exact: N times the centered value)
//  (26b) u = the least u >= 0 with max_i |d_i| < N 2^(16+u);  d_i <- RSH(d_i, u),  EPS_u = RSH(EPS, 2u)
//        (u = 0 for any row of 16-bit codes: |d_i| <= N (q_max - q_min); 32-bit rows keep 16+ bits)
//   (27) W = 2^16 sum d_i^2 + N^3 EPS_u,  EPS = R(2^16 eps / s_x^2)   (= 2^16 N^3 (var + eps) in codes)
//   (28) P = floor((110 - ceil(log2 N)) / 2),  r = ISQRT(floor(2^(2P+16) N / W))   (= 2^P / (N sigma))
//   (29) t_i = d_i r                                          (= 2^P (x_i - mean) / sigma, in codes)
//   (30) q_y = SAT(RSH(sign_j m_j t_i + B_j 2^(n_j + P - 16), n_j + P) + z_y),
//        gamma_j / s_y = sign_j m_j 2^-n_j (12),  B_j = R(2^16 beta_j / s_y)
// `rows` contiguous rows of N codes; affine(row, i) is the gamma/beta index j of element i.
template <typename Affine>
void normalize_rows(QContext& c, const params::Normalize& p, int64_t rows, int64_t N, Affine affine) {
  const Tensor& x = *c.in[0];
  Tensor& y = c.output(0, x.shape());
  const int64_t* m = p.mult.data<int64_t>();
  const int64_t* n = p.shift.data<int64_t>();
  const int64_t* sign = p.sign.data<int64_t>();
  const int64_t* B = p.beta.data<int64_t>();
  __int128 EPS = p.eps_fx;
  int log2n = 0;
  while ((int64_t{1} << log2n) < N) ++log2n;
  int P = (110 - log2n) / 2;
  std::vector<int64_t> q = load_codes(x, c.in_q[0].zero_point);
  fx::Range r = fx::range_of(c.out_q[0].type);
  int64_t zy = c.out_q[0].zero_point;
  std::vector<int64_t> yq(q.size());
  parallel_for(rows, c.threads, [&](int64_t row) {
    const int64_t* qr = q.data() + row * N;
    int64_t S1 = 0;
    for (int64_t i = 0; i < N; ++i) S1 += qr[i];
    __int128 D = 0;  // (26b)
    for (int64_t i = 0; i < N; ++i) {
      __int128 d = static_cast<__int128>(N) * qr[i] - S1;
      D = std::max(D, d < 0 ? -d : d);
    }
    int u = 0;
    while (D >= (static_cast<__int128>(N) << (16 + u))) ++u;
    auto centered = [&](int64_t i) { return fx::rsh128(static_cast<__int128>(N) * qr[i] - S1, u); };
    __int128 V = 0;
    for (int64_t i = 0; i < N; ++i) {
      __int128 d = centered(i);
      V += d * d;
    }
    __int128 W = V * 65536 + static_cast<__int128>(N) * N * N * fx::rsh128(EPS, 2 * u);
    __int128 rr = W > 0 ? fx::isqrt128((static_cast<__int128>(N) << (2 * P + 16)) / W) : 0;
    for (int64_t i = 0; i < N; ++i) {
      int64_t j = affine(row, i);
      __int128 t = centered(i) * rr;
      __int128 v = fx::rsh128(sign[j] * m[j] * t + (static_cast<__int128>(B[j]) << (n[j] + P - 16)), static_cast<int>(n[j] + P));
      yq[row * N + i] = v < r.lo - zy ? r.lo : (v > r.hi - zy ? r.hi : static_cast<int64_t>(v) + zy);
    }
  });
  store_codes(y, yq);
}

}  // namespace

void k_layernorm(QContext& c) {
  const Tensor& x = *c.in[0];
  const auto& p = c.op.as<params::LayerNorm>();
  int64_t N = x.dim(-1), rows = x.numel() / std::max<int64_t>(N, 1);
  int64_t per = p.mult.numel();  // N, or 1 when gamma/beta are scalars
  FP_CHECK(per == 1 || per == N, c.op.node.label(), ": last axis has ", N, " values, scale/bias ", per);
  normalize_rows(c, p, rows, N, [per](int64_t, int64_t i) { return per == 1 ? 0 : i; });
}

// InstanceNormalization (§5.19): the rows of (26)-(30) are the (n, c) planes; j = c.
void k_instancenorm(QContext& c) {
  const Tensor& x = *c.in[0];
  const auto& p = c.op.as<params::InstanceNorm>();
  FP_CHECK(x.rank() >= 3, c.op.node.label(), ": input must be N x C x D1 ..., got ", shape_str(x.shape()));
  int64_t C = x.dim(1), rows = x.dim(0) * C, N = rows ? x.numel() / rows : 0;
  FP_CHECK(p.mult.numel() == C, c.op.node.label(), ": ", C, " channels, scale/bias ", p.mult.numel());
  normalize_rows(c, p, rows, N, [C](int64_t row, int64_t) { return row % C; });
}

}  // namespace fixpoint::qref
