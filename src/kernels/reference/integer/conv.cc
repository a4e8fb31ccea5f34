// Integer Conv, docs/arithmetic.md (14)-(15): a[c] = q_b[c] + sum (q_x - z_x) q_w, accumulated in
// int32 (8-bit layers) or int64 ("wide"), then RQ per output channel (13).
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
  std::vector<int16_t> wcodes = weight_codes(weighted(op));
  const int16_t* pw = wcodes.data();
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

}  // namespace

void k_conv(QContext& c) {
  if (weighted(c.op).wide) conv_impl<int64_t>(c);
  else conv_impl<int32_t>(c);
}

}  // namespace fixpoint::qref
