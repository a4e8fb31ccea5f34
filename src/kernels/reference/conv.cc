// Conv (1-D to 3-D, groups, dilations, pads, auto_pad). Direct convolution: for each output
// channel, the output plane accumulates w[oc,ic,kd,kh,kw] * shifted input planes, in the fixed
// order (ic, kd, kh, kw), bias added last. Every batch row is computed by the same loop.
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_conv(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& w = c.in(1);
  const Tensor* bias = c.input(2);
  FP_CHECK(w.dtype() == x.dtype(), c.node.label(), ": weights dtype differs from input dtype");
  ConvGeometry geo = conv_geometry(c.node, x.shape(), w.shape());
  int64_t N = geo.N, C = geo.C, M = geo.M, cg = geo.cg, mg = geo.mg;
  if (bias) FP_CHECK(bias->numel() == M, c.node.label(), ": bias has ", bias->numel(), " values for ", M, " channels");
  Tensor& y = c.output(0, x.dtype(), geo.out_shape);
  const Shape &in = geo.w3.in, &out = geo.w3.out, &k = geo.w3.kernel, &s = geo.w3.stride;
  int64_t in_plane = geo.in_plane, out_plane = geo.out_plane, k_size = geo.ks;
  dispatch_float(x.dtype(), c.node, [&](auto tag) {
    using T = decltype(tag);
    using Nm = Num<T>;
    using A = typename Nm::C;
    std::vector<A> acc(out_plane), xin(in_plane);
    const T* px = x.data<T>();
    const T* pw = w.data<T>();
    T* py = y.data<T>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) {
        int64_t g = m / mg;
        std::fill(acc.begin(), acc.end(), A(0));
        for (int64_t ci = 0; ci < cg; ++ci) {
          const T* xp = px + (n * C + g * cg + ci) * in_plane;
          for (int64_t i = 0; i < in_plane; ++i) xin[i] = Nm::load(xp[i]);
          const T* wp = pw + (m * cg + ci) * k_size;
          for (int64_t kd = 0; kd < k[0]; ++kd)
            for (int64_t kh = 0; kh < k[1]; ++kh)
              for (int64_t kw = 0; kw < k[2]; ++kw) {
                A wv = Nm::load(wp[(kd * k[1] + kh) * k[2] + kw]);
                for_each_tap_row(geo.w3, kd, kh, kw, [&](int64_t orow, int64_t irow, const ColumnRange& cr) {
                  A* arow = &acc[orow * out[2]];
                  const A* xrow = &xin[irow * in[2]];
                  for (int64_t ow = cr.lo; ow < cr.hi; ++ow) arow[ow] += wv * xrow[ow * s[2] + cr.off];
                });
              }
        }
        A b = bias ? static_cast<A>(bias->get_f64(m)) : A(0);
        T* yp = py + (n * M + m) * out_plane;
        for (int64_t i = 0; i < out_plane; ++i) yp[i] = Nm::store(acc[i] + b);
      }
  });
}

}  // namespace

void register_conv(KernelRegistry& r) { r.add("Conv", k_conv); }

}  // namespace fixpoint::ref
