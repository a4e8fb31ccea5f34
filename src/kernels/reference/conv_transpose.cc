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
  FP_CHECK(x.rank() >= 3 && x.rank() <= 5 && w.rank() == x.rank(), n.label(), ": input ", shape_str(x.shape()),
           " and weights ", shape_str(w.shape()), " do not fit");
  FP_CHECK(w.dtype() == x.dtype(), n.label(), ": weights dtype differs from input dtype");
  int64_t group = n.attr_int("group", 1);
  int64_t N = x.dim(0), C = x.dim(1);
  FP_CHECK(group >= 1 && C % group == 0 && w.dim(0) == C, n.label(), ": weights ", shape_str(w.shape()),
           " do not fit ", C, " input channels with group ", group);
  int64_t mg = w.dim(1), M = mg * group, cg = C / group;
  size_t r = x.rank() - 2;
  Shape in(x.shape().begin() + 2, x.shape().end()), k(w.shape().begin() + 2, w.shape().end());
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
  Shape ys = {N, M};
  ys.insert(ys.end(), out.begin(), out.end());
  Tensor& y = c.output(0, x.dtype(), ys);
  if (bias) FP_CHECK(bias->numel() == M, n.label(), ": bias has ", bias->numel(), " values for ", M, " channels");
  while (in.size() < 3) {
    in.insert(in.begin(), 1); out.insert(out.begin(), 1); k.insert(k.begin(), 1);
    s.insert(s.begin(), 1); d.insert(d.begin(), 1); pb.insert(pb.begin(), 0);
  }
  int64_t in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2], k_size = k[0] * k[1] * k[2];
  dispatch_float(x.dtype(), n, [&](auto tag) {
    using T = decltype(tag);
    using Nm = Num<T>;
    using A = typename Nm::C;
    std::vector<A> acc(out_plane);
    const T* px = x.data<T>();
    const T* pw = w.data<T>();
    T* py = y.data<T>();
    for (int64_t b = 0; b < N; ++b)
      for (int64_t m = 0; m < M; ++m) {
        int64_t g = m / mg, mm = m % mg;
        std::fill(acc.begin(), acc.end(), A(0));
        for (int64_t ci = 0; ci < cg; ++ci) {
          const T* xp = px + (b * C + g * cg + ci) * in_plane;
          const T* wp = pw + ((g * cg + ci) * mg + mm) * k_size;
          for (int64_t id = 0; id < in[0]; ++id)
            for (int64_t ih = 0; ih < in[1]; ++ih)
              for (int64_t iw = 0; iw < in[2]; ++iw) {
                A xv = Nm::load(xp[(id * in[1] + ih) * in[2] + iw]);
                for (int64_t kd = 0; kd < k[0]; ++kd) {
                  int64_t od = id * s[0] - pb[0] + kd * d[0];
                  if (od < 0 || od >= out[0]) continue;
                  for (int64_t kh = 0; kh < k[1]; ++kh) {
                    int64_t oh = ih * s[1] - pb[1] + kh * d[1];
                    if (oh < 0 || oh >= out[1]) continue;
                    for (int64_t kw = 0; kw < k[2]; ++kw) {
                      int64_t ow = iw * s[2] - pb[2] + kw * d[2];
                      if (ow < 0 || ow >= out[2]) continue;
                      acc[(od * out[1] + oh) * out[2] + ow] += xv * Nm::load(wp[(kd * k[1] + kh) * k[2] + kw]);
                    }
                  }
                }
              }
        }
        A bv = bias ? static_cast<A>(bias->get_f64(m)) : A(0);
        T* yp = py + (b * M + m) * out_plane;
        for (int64_t i = 0; i < out_plane; ++i) yp[i] = Nm::store(acc[i] + bv);
      }
  });
}

}  // namespace

void register_conv_transpose(KernelRegistry& r) { r.add("ConvTranspose", k_conv_transpose); }

}  // namespace fixpoint::ref
