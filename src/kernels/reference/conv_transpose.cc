// ConvTranspose (1-D to 3-D): each input pixel scatters x * w into the output. Output size and
// pads follow the ONNX spec: out = stride*(in-1) + output_padding + (k-1)*dilation + 1 - pads,
// or pads derived from output_shape / auto_pad.
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_conv_transpose(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& w = c.in(1);
  const Tensor* bias = c.input(2);
  const Node& n = c.node;
  FP_CHECK(w.dtype() == x.dtype(), n.label(), ": weights dtype differs from input dtype");
  TransposeWindow t = conv_transpose_window(n, x.shape(), w.shape());
  Tensor& y = c.output(0, x.dtype(), t.out_shape);
  if (bias) FP_CHECK(bias->numel() == t.M, n.label(), ": bias has ", bias->numel(), " values for ", t.M, " channels");
  int64_t in_plane = t.in[0] * t.in[1] * t.in[2], out_plane = t.out[0] * t.out[1] * t.out[2];
  int64_t k_size = t.k[0] * t.k[1] * t.k[2];
  dispatch_float(x.dtype(), n, [&](auto tag) {
    using T = decltype(tag);
    using Nm = Num<T>;
    using A = typename Nm::C;
    std::vector<A> acc(out_plane);
    const T* px = x.data<T>();
    const T* pw = w.data<T>();
    T* py = y.data<T>();
    for (int64_t b = 0; b < t.N; ++b)
      for (int64_t m = 0; m < t.M; ++m) {
        std::fill(acc.begin(), acc.end(), A(0));
        int64_t mm = m % t.mg;
        conv_transpose_scatter<A>(
            t, m, [&](int64_t ci, int64_t i) { return Nm::load(px[(b * t.C + ci) * in_plane + i]); },
            [&](int64_t ci, int64_t k) { return Nm::load(pw[(ci * t.mg + mm) * k_size + k]); }, acc.data());
        A bv = bias ? static_cast<A>(bias->get_f64(m)) : A(0);
        T* yp = py + (b * t.M + m) * out_plane;
        for (int64_t i = 0; i < out_plane; ++i) yp[i] = Nm::store(acc[i] + bv);
      }
  });
}

}  // namespace

TransposeWindow conv_transpose_window(const Node& n, const Shape& xs, const Shape& ws) {
  FP_CHECK(xs.size() >= 3 && xs.size() <= 5 && ws.size() == xs.size(), n.label(), ": input ", shape_str(xs),
           " and weights ", shape_str(ws), " do not fit");
  TransposeWindow t;
  int64_t group = n.attr_int("group", 1);
  t.N = xs[0];
  t.C = xs[1];
  FP_CHECK(group >= 1 && t.C % group == 0 && ws[0] == t.C, n.label(), ": weights ", shape_str(ws), " do not fit ", t.C,
           " input channels with group ", group);
  t.mg = ws[1];
  t.M = t.mg * group;
  t.cg = t.C / group;
  size_t r = xs.size() - 2;
  Shape in(xs.begin() + 2, xs.end()), k(ws.begin() + 2, ws.end());
  Shape s = n.attr_ints("strides", Shape(r, 1)), d = n.attr_ints("dilations", Shape(r, 1));
  Shape op = n.attr_ints("output_padding", Shape(r, 0)), pads = n.attr_ints("pads", Shape(2 * r, 0));
  Shape oshape = n.attr_ints("output_shape");
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  FP_CHECK(s.size() == r && d.size() == r && op.size() == r && pads.size() == 2 * r, n.label(),
           ": strides/dilations/output_padding/pads do not match ", r, " spatial dims");
  if (oshape.size() == r + 2) oshape.erase(oshape.begin(), oshape.begin() + 2);
  Shape out(r), pb(r);
  for (size_t i = 0; i < r; ++i) {
    FP_CHECK(s[i] >= 1 && d[i] >= 1 && pads[i] >= 0 && pads[i + r] >= 0 && op[i] >= 0, n.label(),
             ": strides and dilations must be >= 1, pads and output_padding >= 0");
    int64_t full = s[i] * (in[i] - 1) + op[i] + (k[i] - 1) * d[i] + 1;
    if (!oshape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      FP_CHECK(oshape.empty() || oshape.size() == r, n.label(), ": output_shape must have ", r, " spatial values");
      out[i] = oshape.empty() ? in[i] * s[i] : oshape[i];
      int64_t total = full - out[i];
      // ONNX spec, with floor division (total may be negative when output_shape is larger):
      // SAME_UPPER puts floor(total/2) first, everything else total - floor(total/2).
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      pb[i] = auto_pad == "SAME_UPPER" ? half : total - half;
    } else {
      pb[i] = auto_pad == "VALID" ? 0 : pads[i];
      int64_t pe = auto_pad == "VALID" ? 0 : pads[i + r];
      out[i] = full - pb[i] - pe;
    }
    FP_CHECK(out[i] >= 0, n.label(), ": computed a negative output size");
  }
  t.out_shape = {t.N, t.M};
  t.out_shape.insert(t.out_shape.end(), out.begin(), out.end());
  while (in.size() < 3) {
    in.insert(in.begin(), 1); out.insert(out.begin(), 1); k.insert(k.begin(), 1);
    s.insert(s.begin(), 1); d.insert(d.begin(), 1); pb.insert(pb.begin(), 0);
  }
  t.in = in; t.out = out; t.k = k; t.s = s; t.d = d; t.pb = pb;
  return t;
}

void register_conv_transpose(KernelRegistry& r) { r.add("ConvTranspose", k_conv_transpose); }

}  // namespace fixpoint::ref
