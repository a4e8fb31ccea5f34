// BatchNormalization (inference, and training mode's batch statistics), InstanceNormalization,
// LayerNormalization. Statistics accumulate in double, so the result does not depend on the
// order of the reduction more than float rounding of the final value.
#include "common.h"
#include "layer_norm_row.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_batch_norm(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  FP_CHECK(x.rank() >= 2, n.label(), ": input must be N x C x ..., got ", shape_str(x.shape()));
  int64_t N = x.dim(0), C = x.dim(1), plane = x.numel() / std::max<int64_t>(1, N * C);
  for (size_t k = 1; k <= 4; ++k)
    FP_CHECK(c.in(k).numel() == C, n.label(), ": input ", k, " must have ", C, " values, got ",
             shape_str(c.in(k).shape()));
  double eps = n.attr_float("epsilon", 1e-5f);
  bool training = n.opset >= 14 && n.attr_int("training_mode", 0) != 0;
  std::vector<double> sc(C), bi(C), mean(C), var(C);
  for (int64_t ch = 0; ch < C; ++ch) {
    sc[ch] = c.in(1).get_f64(ch);
    bi[ch] = c.in(2).get_f64(ch);
    mean[ch] = c.in(3).get_f64(ch);
    var[ch] = c.in(4).get_f64(ch);
  }
  std::vector<double> bmean(C, 0), bvar(C, 0);
  if (training) {
    for (int64_t ch = 0; ch < C; ++ch) {
      double s = 0, s2 = 0;
      for (int64_t b = 0; b < N; ++b)
        for (int64_t i = 0; i < plane; ++i) s += x.get_f64((b * C + ch) * plane + i);
      double m = s / static_cast<double>(N * plane);
      for (int64_t b = 0; b < N; ++b)
        for (int64_t i = 0; i < plane; ++i) {
          double d = x.get_f64((b * C + ch) * plane + i) - m;
          s2 += d * d;
        }
      bmean[ch] = m;
      bvar[ch] = s2 / static_cast<double>(N * plane);
    }
  }
  Tensor& y = c.output(0, x.dtype(), x.shape());
  dispatch_float(x.dtype(), n, [&](auto tag) {
    using T = decltype(tag);
    using Nm = Num<T>;
    using A = typename Nm::C;
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (int64_t ch = 0; ch < C; ++ch) {
      double m = training ? bmean[ch] : mean[ch], v = training ? bvar[ch] : var[ch];
      // y = x * a + b with a = scale / sqrt(var + eps), b = bias - mean * a
      A a = static_cast<A>(sc[ch] / std::sqrt(v + eps));
      A b = static_cast<A>(bi[ch] - m * sc[ch] / std::sqrt(v + eps));
      for (int64_t bb = 0; bb < N; ++bb) {
        int64_t off = (bb * C + ch) * plane;
        for (int64_t i = 0; i < plane; ++i) py[off + i] = Nm::store(Nm::load(px[off + i]) * a + b);
      }
    }
  });
  if (training) {
    double momentum = n.attr_float("momentum", 0.9f);
    for (size_t k = 1; k <= 2; ++k) {
      if (!c.wants_output(k)) continue;
      Tensor& o = c.output(k, c.in(3).dtype(), c.in(3).shape());
      for (int64_t ch = 0; ch < C; ++ch)
        o.set_f64(ch, k == 1 ? mean[ch] * momentum + bmean[ch] * (1 - momentum)
                             : var[ch] * momentum + bvar[ch] * (1 - momentum));
    }
  }
}

void k_instance_norm(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  FP_CHECK(x.rank() >= 3, n.label(), ": input must be N x C x D1 ..., got ", shape_str(x.shape()));
  int64_t N = x.dim(0), C = x.dim(1), plane = x.numel() / std::max<int64_t>(1, N * C);
  FP_CHECK(c.in(1).numel() == C && c.in(2).numel() == C, n.label(), ": scale and B must have ", C, " values");
  double eps = n.attr_float("epsilon", 1e-5f);
  Tensor& y = c.output(0, x.dtype(), x.shape());
  for (int64_t nc = 0; nc < N * C; ++nc) {
    int64_t ch = nc % C, off = nc * plane;
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < plane; ++i) s += x.get_f64(off + i);
    double m = s / static_cast<double>(plane);
    for (int64_t i = 0; i < plane; ++i) s2 += (x.get_f64(off + i) - m) * (x.get_f64(off + i) - m);
    double inv = 1.0 / std::sqrt(s2 / static_cast<double>(plane) + eps);
    double sc = c.in(1).get_f64(ch), bi = c.in(2).get_f64(ch);
    for (int64_t i = 0; i < plane; ++i) y.set_f64(off + i, (x.get_f64(off + i) - m) * inv * sc + bi);
  }
}

void k_layer_norm(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& scale = c.in(1);
  const Tensor* bias = c.input(2);
  const Node& n = c.node;
  const LayerNormGeometry geo = layer_norm_geometry(n, x.shape(), scale.shape(), bias ? &bias->shape() : nullptr);
  int64_t axis = norm_axis(n.attr_int("axis", -1), x.rank(), n);
  double eps = n.attr_float("epsilon", 1e-5f);
  Tensor& y = c.output(0, x.dtype(), x.shape());
  Shape stat_shape = x.shape();
  for (int64_t i = axis; i < x.rank(); ++i) stat_shape[i] = 1;
  DType stat_dtype = n.attr_int("stash_type", 1) == 1 ? DType::Float32 : x.dtype();
  Tensor* mean_out = c.wants_output(1) ? &c.output(1, stat_dtype, stat_shape) : nullptr;
  Tensor* inv_out = c.wants_output(2) ? &c.output(2, stat_dtype, stat_shape) : nullptr;
  auto scale_at = [&](int64_t j) { return scale.get_f64(geo.scale_off[static_cast<size_t>(j)]); };
  auto bias_at = [&](int64_t j) { return bias->get_f64(geo.bias_off[static_cast<size_t>(j)]); };
  dispatch_float(x.dtype(), n, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (int64_t o = 0; o < geo.outer; ++o) {
      double m, inv;
      layer_norm_row(px + o * geo.inner, py + o * geo.inner, geo.inner, eps, scale_at, bias_at, bias != nullptr, m,
                     inv);
      if (mean_out) mean_out->set_f64(o, m);
      if (inv_out) inv_out->set_f64(o, inv);
    }
  });
}

}  // namespace

LayerNormGeometry layer_norm_geometry(const Node& n, const Shape& x, const Shape& scale, const Shape* bias) {
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = norm_axis(n.attr_int("axis", -1), rank, n);
  LayerNormGeometry g;
  for (int64_t i = 0; i < axis; ++i) g.outer *= x[static_cast<size_t>(i)];
  for (int64_t i = axis; i < rank; ++i) g.inner *= x[static_cast<size_t>(i)];
  Shape norm_shape(x.begin() + axis, x.end());
  FP_CHECK(broadcast(scale, norm_shape, n) == norm_shape, n.label(), ": scale ", shape_str(scale),
           " does not broadcast to ", shape_str(norm_shape));
  if (bias)
    FP_CHECK(broadcast(*bias, norm_shape, n) == norm_shape, n.label(), ": B ", shape_str(*bias),
             " does not broadcast to ", shape_str(norm_shape));
  std::vector<int64_t> sst = broadcast_strides(scale, norm_shape);
  std::vector<int64_t> bst = bias ? broadcast_strides(*bias, norm_shape) : std::vector<int64_t>();
  std::vector<int64_t> nst = strides_of(norm_shape);
  auto bcast_off = [&](const std::vector<int64_t>& st, int64_t j) {
    int64_t off = 0;
    for (size_t d = 0; d < nst.size(); ++d) off += (j / nst[d] % norm_shape[d]) * st[d];
    return off;
  };
  g.scale_off.resize(static_cast<size_t>(g.inner));
  if (bias) g.bias_off.resize(static_cast<size_t>(g.inner));
  for (int64_t j = 0; j < g.inner; ++j) {
    g.scale_off[static_cast<size_t>(j)] = bcast_off(sst, j);
    if (bias) g.bias_off[static_cast<size_t>(j)] = bcast_off(bst, j);
  }
  return g;
}

void register_normalization(KernelRegistry& r) {
  r.add("BatchNormalization", k_batch_norm);
  r.add("InstanceNormalization", k_instance_norm);
  r.add("LayerNormalization", k_layer_norm);
}

}  // namespace fixpoint::ref
