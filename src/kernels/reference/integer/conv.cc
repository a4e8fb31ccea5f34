// Integer Conv and MatMul/Gemm, docs/arithmetic.md (14)-(15): a[c] = q_b[c] + sum (q_x - z_x) q_w,
// accumulated in int32 (8-bit layers) or int64 ("wide"), then RQ per output channel (13).
#include "../common.h"
#include "fixpoint/parallel.h"
#include "integer_kernels.h"

namespace fixpoint::qref {
namespace {

template <typename Acc>
void conv_impl(QContext& c) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const Tensor& w = weighted(op).weight;
  ChannelRequant rq(c);
  ref::ConvGeometry geo = ref::conv_geometry(op.node, x.shape(), w.shape());
  int64_t N = geo.N, C = geo.C, M = geo.M, cg = geo.cg, mg = geo.mg;
  const ref::Window& w3 = geo.w3;
  const Shape &in = w3.in, &out = w3.out, &k = w3.kernel, &s = w3.stride;
  Tensor& y = c.output(0, geo.out_shape);
  std::vector<int64_t> xq = load_codes(x, c.in_q[0].zero_point);
  const int16_t* pw = w.data<int16_t>();
  int64_t in_plane = geo.in_plane, out_plane = geo.out_plane, ks = geo.ks;
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  // Each (batch row, output channel) plane is independent: split them across threads.
  parallel_for(N * M, c.threads, [&](int64_t bm) {
      int64_t b = bm / M, m = bm % M;
      std::vector<Acc> acc(out_plane, static_cast<Acc>(rq.bias[m]));
      int64_t g = m / mg;
      for (int64_t ci = 0; ci < cg; ++ci) {
        const int64_t* xp = xq.data() + (b * C + g * cg + ci) * in_plane;
        const int16_t* wp = pw + (m * cg + ci) * ks;
        for (int64_t kd = 0; kd < k[0]; ++kd)
          for (int64_t kh = 0; kh < k[1]; ++kh)
            for (int64_t kw = 0; kw < k[2]; ++kw) {
              Acc wv = wp[(kd * k[1] + kh) * k[2] + kw];
              if (wv == 0) continue;
              ref::for_each_tap_row(w3, kd, kh, kw, [&](int64_t orow, int64_t irow, const ref::ColumnRange& cr) {
                Acc* arow = &acc[orow * out[2]];
                const int64_t* xrow = xp + irow * in[2] + cr.off;
                for (int64_t ow = cr.lo; ow < cr.hi; ++ow) arow[ow] += wv * static_cast<Acc>(xrow[ow * s[2]]);
              });
            }
      }
      int64_t* yp = yq.data() + (b * M + m) * out_plane;
      for (int64_t i = 0; i < out_plane; ++i) yp[i] = rq(acc[i], m);
  });
  store_codes(y, yq);
}

void k_conv(QContext& c) {
  if (weighted(c.op).wide) conv_impl<int64_t>(c);
  else conv_impl<int32_t>(c);
}

// Gemm (A: M x K) and MatMul (A: ... x K) against prepared W[N][K].
template <typename Acc>
void matmul_impl(QContext& c) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const Tensor& w = weighted(op).weight;
  int64_t N = w.dim(0), K = w.dim(1);
  FP_CHECK(x.rank() >= 1 && x.dim(-1) == K, op.node.label(), ": input ", shape_str(x.shape()), " does not have ", K,
           " columns");
  Shape ys = x.shape();
  ys.back() = N;
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> xq = load_codes(x, c.in_q[0].zero_point);
  const int16_t* pw = w.data<int16_t>();
  ChannelRequant rq(c);
  int64_t rows = x.numel() / std::max<int64_t>(K, 1);
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  parallel_for(rows, c.threads, [&](int64_t i) {
    for (int64_t j = 0; j < N; ++j) {
      Acc a = static_cast<Acc>(rq.bias[j]);
      for (int64_t k = 0; k < K; ++k) a += static_cast<Acc>(xq[i * K + k]) * pw[j * K + k];
      yq[i * N + j] = rq(a, j);
    }
  });
  store_codes(y, yq);
}

void k_matmul(QContext& c) {
  if (weighted(c.op).wide) matmul_impl<int64_t>(c);
  else matmul_impl<int32_t>(c);
}

// ConvTranspose (22): the scatter of ref::conv_transpose_scatter on codes, weights prepared as
// W[m][ (c - g*cg) * k_size + k ] (one row per output channel), then RQ per output channel.
void k_conv_transpose(QContext& c) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const auto& p = op.as<params::ConvTranspose>();
  const Tensor& w = p.weight;
  // The float weight shape [C, M/group, k...] the geometry is defined on.
  Shape ws = {x.dim(1), p.mg};
  for (int64_t v : p.kernel_shape.to_i64_vector()) ws.push_back(v);
  ref::TransposeWindow t = ref::conv_transpose_window(op.node, x.shape(), ws);
  Tensor& y = c.output(0, t.out_shape);
  std::vector<int64_t> xq = load_codes(x, c.in_q[0].zero_point);
  const int16_t* pw = w.data<int16_t>();
  ChannelRequant rq(c);
  int64_t K = w.dim(1);
  int64_t in_plane = t.in[0] * t.in[1] * t.in[2], out_plane = t.out[0] * t.out[1] * t.out[2], ks = t.k[0] * t.k[1] * t.k[2];
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  parallel_for(t.N * t.M, c.threads, [&](int64_t bm) {
    int64_t b = bm / t.M, m = bm % t.M, g = m / t.mg;
    std::vector<int64_t> acc(static_cast<size_t>(out_plane), rq.bias[m]);  // exact in int64 (§4)
    ref::conv_transpose_scatter<int64_t>(
        t, m, [&](int64_t ci, int64_t i) { return xq[static_cast<size_t>((b * t.C + ci) * in_plane + i)]; },
        [&](int64_t ci, int64_t k) { return pw[m * K + (ci - g * t.cg) * ks + k]; }, acc.data());
    int64_t* yp = yq.data() + bm * out_plane;
    for (int64_t i = 0; i < out_plane; ++i) yp[i] = rq(acc[i], m);
  });
  store_codes(y, yq);
}

// MatMul of two activations (21): a = sum_k (q_a - z_a)(q_b - z_b) over numpy-broadcast batch
// dims, exact in int64, then RQ with M = s_a s_b / s_y.
void k_matmul2(QContext& c) {
  const QOp& op = c.op;
  const Tensor &a = *c.in[0], &b = *c.in[1];
  FP_CHECK(a.rank() >= 2 && b.rank() >= 2 && a.dim(-1) == b.dim(-2), op.node.label(), ": cannot multiply ",
           shape_str(a.shape()), " by ", shape_str(b.shape()));
  int64_t M = a.dim(-2), K = a.dim(-1), N = b.dim(-1);
  Shape ab(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch = ref::broadcast(ab, bb, op.node);
  Shape ys = batch;
  ys.push_back(M);
  ys.push_back(N);
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> qa = load_codes(a, c.in_q[0].zero_point), qb = load_codes(b, c.in_q[1].zero_point);
  const auto& p = op.as<params::MatMul2>();
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  fx::Range r = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  std::vector<std::array<int64_t, 2>> offs;
  ref::for_each_broadcast<2>(batch, {ab, bb}, [&](int64_t, const std::array<int64_t, 2>& off) { offs.push_back(off); });
  parallel_for(static_cast<int64_t>(offs.size()) * M, c.threads, [&](int64_t bi) {
    int64_t o = bi / M, i = bi % M;
    const int64_t* pa = qa.data() + offs[o][0] * M * K + i * K;
    const int64_t* pb = qb.data() + offs[o][1] * K * N;
    for (int64_t j = 0; j < N; ++j) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += pa[k] * pb[k * N + j];
      yq[(o * M + i) * N + j] = fx::requantize_wide(acc, mu, zy, r);
    }
  });
  store_codes(y, yq);
}

}  // namespace

void register_conv_kernels(std::map<std::string, QKernelFn>& r) {
  r["conv"] = k_conv;
  r["matmul"] = k_matmul;
  r["conv_transpose"] = k_conv_transpose;
  r["matmul2"] = k_matmul2;
}

}  // namespace fixpoint::qref
