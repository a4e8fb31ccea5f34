// Integer ConvTranspose (22), docs/arithmetic.md §5.12.
#include "../common.h"
#include "fixpoint/parallel.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

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
  std::vector<int16_t> wcodes = weight_codes(weighted(op));
  const int16_t* pw = wcodes.data();
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

}  // namespace fixpoint::qref
