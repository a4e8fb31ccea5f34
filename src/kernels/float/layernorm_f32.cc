// LayerNormalization on float32, on the fast path: the reference's row definition
// (src/kernels/reference/layer_norm_row.h, so the same bits by construction) with the rows split
// between threads (each row alone: any split gives the same bits). Its statistics accumulate in
// double in element order, a serial chain per row, so the rows are the parallelism; a vectorized
// reduction would reorder the sums and give other bits than the reference. Nodes that ask for the
// Mean or InvStdDev outputs run the reference kernel.
#include "../reference/layer_norm_row.h"
#include "fast_float_ops.h"
#include "fixpoint/parallel.h"

namespace fixpoint::fk {
namespace {

class LayerNormF32 final : public PreparedKernel {
 public:
  bool run(KernelContext& c) const override {
    const Tensor& x = c.in(0);
    const Tensor& scale = c.in(1);
    const Tensor* bias = c.input(2);
    if (x.dtype() != DType::Float32 || c.wants_output(1) || c.wants_output(2)) return false;
    const ref::LayerNormGeometry geo =
        ref::layer_norm_geometry(c.node, x.shape(), scale.shape(), bias ? &bias->shape() : nullptr);
    const double eps = c.node.attr_float("epsilon", 1e-5f);
    // The scale and bias of each row element as double, once (get_f64: the values the
    // reference reads).
    std::vector<double> s(static_cast<size_t>(geo.inner)), b(bias ? static_cast<size_t>(geo.inner) : 0);
    for (int64_t j = 0; j < geo.inner; ++j) {
      s[static_cast<size_t>(j)] = scale.get_f64(geo.scale_off[static_cast<size_t>(j)]);
      if (bias) b[static_cast<size_t>(j)] = bias->get_f64(geo.bias_off[static_cast<size_t>(j)]);
    }
    Tensor& y = c.output(0, DType::Float32, x.shape(), false);  // every element written
    const float* px = x.data<float>();
    float* py = y.data<float>();
    auto scale_at = [&](int64_t j) { return s[static_cast<size_t>(j)]; };
    auto bias_at = [&](int64_t j) { return b[static_cast<size_t>(j)]; };
    parallel_for(geo.outer, c.threads, [&](int64_t o) {
      double m, inv;
      ref::layer_norm_row(px + o * geo.inner, py + o * geo.inner, geo.inner, eps, scale_at, bias_at, bias != nullptr,
                          m, inv);
    });
    return true;
  }
};

}  // namespace

void register_layernorm_f32(KernelRegistry& r) {
  r.add_prepared("LayerNormalization", prepare_stateless<LayerNormF32>);
}

}  // namespace fixpoint::fk
