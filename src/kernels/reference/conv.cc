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
  FP_CHECK(w.rank() == x.rank() && x.rank() >= 3, c.node.label(), ": input ", shape_str(x.shape()), " and weights ",
           shape_str(w.shape()), " do not fit");
  FP_CHECK(x.rank() <= 5, c.node.label(), ": more than 3 spatial dims are not supported");
  FP_CHECK(w.dtype() == x.dtype(), c.node.label(), ": weights dtype differs from input dtype");
  int64_t group = c.node.attr_int("group", 1);
  int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0);
  FP_CHECK(group >= 1 && C % group == 0 && M % group == 0 && w.dim(1) == C / group, c.node.label(), ": group ", group,
           " does not fit input channels ", C, " and weights ", shape_str(w.shape()));
  Shape kshape(w.shape().begin() + 2, w.shape().end());
  if (c.node.has_attr("kernel_shape"))
    FP_CHECK(c.node.attr_ints("kernel_shape") == kshape, c.node.label(), ": kernel_shape disagrees with weights ",
             shape_str(w.shape()));
  Window win = sliding_window(c.node, x.shape(), kshape, false);
  if (bias) FP_CHECK(bias->numel() == M, c.node.label(), ": bias has ", bias->numel(), " values for ", M, " channels");
  Shape ys = {N, M};
  ys.insert(ys.end(), win.out.begin(), win.out.end());
  Tensor& y = c.output(0, x.dtype(), ys);
  Window w3 = to_3d(win);
  const Shape &in = w3.in, &out = w3.out, &k = w3.kernel, &s = w3.stride, &d = w3.dilation, &p = w3.pad_begin;
  int64_t in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2], k_size = k[0] * k[1] * k[2];
  int64_t cg = C / group, mg = M / group;
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
                for (int64_t od = 0; od < out[0]; ++od) {
                  int64_t id = od * s[0] - p[0] + kd * d[0];
                  if (id < 0 || id >= in[0]) continue;
                  for (int64_t oh = 0; oh < out[1]; ++oh) {
                    int64_t ih = oh * s[1] - p[1] + kh * d[1];
                    if (ih < 0 || ih >= in[1]) continue;
                    A* arow = &acc[(od * out[1] + oh) * out[2]];
                    const A* xrow = &xin[(id * in[1] + ih) * in[2]];
                    // valid ow range: 0 <= ow*s - p + kw*d < in
                    int64_t off = kw * d[2] - p[2];
                    int64_t ow0 = off >= 0 ? 0 : (-off + s[2] - 1) / s[2];
                    int64_t ow1 = in[2] - off <= 0 ? 0 : std::min(out[2], (in[2] - off + s[2] - 1) / s[2]);
                    for (int64_t ow = ow0; ow < ow1; ++ow) arow[ow] += wv * xrow[ow * s[2] + off];
                  }
                }
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
