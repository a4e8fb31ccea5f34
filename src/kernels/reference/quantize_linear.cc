// QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point), per tensor or per axis.
// DequantizeLinear: y = (x - zero_point) * scale. (ONNX's own rounding rule for these ops; the
// fixed-point engine's rule is in docs/arithmetic.md.)
#include <limits>

#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

// Index into the scale/zero-point vector for element i (per-tensor: always 0).
struct ParamIndex {
  int64_t inner = 1, len = 1;
  int64_t operator()(int64_t i) const { return len == 1 ? 0 : (i / inner) % len; }
};

ParamIndex param_index(const Node& n, const Tensor& x, const Tensor& scale) {
  ParamIndex p;
  if (scale.numel() <= 1 && scale.rank() == 0) return p;
  if (scale.numel() == 1) return p;
  int64_t axis = norm_axis(n.attr_int("axis", 1), x.rank(), n);
  FP_CHECK(scale.numel() == x.dim(axis), n.label(), ": scale has ", scale.numel(), " values for axis of size ",
           x.dim(axis));
  p.len = x.dim(axis);
  for (int64_t d = axis + 1; d < x.rank(); ++d) p.inner *= x.dim(d);
  return p;
}

void k_quantize(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& scale = c.in(1);
  const Tensor* zp = c.input(2);
  DType out = zp ? zp->dtype() : DType::UInt8;
  FP_CHECK(out == DType::UInt8 || out == DType::Int8 || out == DType::Int16 || out == DType::UInt16, c.node.label(),
           ": unsupported quantized dtype ", dtype_name(out));
  ParamIndex pi = param_index(c.node, x, scale);
  Tensor& y = c.output(0, out, x.shape());
  double lo = out == DType::UInt8 ? 0 : out == DType::Int8 ? -128 : out == DType::Int16 ? -32768 : 0;
  double hi = out == DType::UInt8 ? 255 : out == DType::Int8 ? 127 : out == DType::Int16 ? 32767 : 65535;
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t k = pi(i);
    double q = round_half_even(static_cast<float>(x.get_f64(i)) / static_cast<float>(scale.get_f64(k)));
    q += zp ? zp->get_f64(k) : 0.0;
    y.set_f64(i, std::clamp(q, lo, hi));
  }
}

void k_dequantize(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& scale = c.in(1);
  const Tensor* zp = c.input(2);
  ParamIndex pi = param_index(c.node, x, scale);
  Tensor& y = c.output(0, scale.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t k = pi(i);
    float v = static_cast<float>(x.get_i64(i) - (zp ? zp->get_i64(k) : 0)) * static_cast<float>(scale.get_f64(k));
    y.set_f64(i, v);
  }
}

}  // namespace

void register_quantize_linear(KernelRegistry& r) {
  r.add("QuantizeLinear", k_quantize);
  r.add("DequantizeLinear", k_dequantize);
}

}  // namespace fixpoint::ref
