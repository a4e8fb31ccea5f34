// BatchNormalization (inference) on float32, on the fast path: the reference's per-channel
// a = scale / sqrt(var + eps) and b = bias - mean * scale / sqrt(var + eps) (in double, rounded
// to float), then y = x * a + b over each plane in float, as the reference computes it, in a
// loop the compiler vectorizes (this translation unit is built for the baseline ISA, like the
// reference, so no multiply-add is contracted in either: the same bits). Memory-bound: runs on
// kElementwiseThreads (fast_float_ops.h). Training mode and other types: the reference.
#include <algorithm>
#include <cmath>
#include <vector>

#include "fast_float_ops.h"
#include "fixpoint/parallel.h"

namespace fixpoint::fk {
namespace {

class BatchNormF32 final : public PreparedKernel {
 public:
  bool run(KernelContext& c) const override {
    const Node& n = c.node;
    const Tensor& x = c.in(0);
    if (x.dtype() != DType::Float32 || x.rank() < 2 || n.outputs.size() != 1 || n.inputs.size() != 5 ||
        (n.opset >= 14 && n.attr_int("training_mode", 0) != 0))
      return false;
    const int64_t N = x.dim(0), C = x.dim(1), plane = x.numel() / std::max<int64_t>(1, N * C);
    for (size_t k = 1; k <= 4; ++k)
      if (c.in(k).numel() != C) return false;  // the reference names the input at fault
    const double eps = n.attr_float("epsilon", 1e-5f);
    std::vector<float> a(static_cast<size_t>(C)), b(static_cast<size_t>(C));
    for (int64_t ch = 0; ch < C; ++ch) {
      double sc = c.in(1).get_f64(ch), bi = c.in(2).get_f64(ch), m = c.in(3).get_f64(ch), v = c.in(4).get_f64(ch);
      a[static_cast<size_t>(ch)] = static_cast<float>(sc / std::sqrt(v + eps));
      b[static_cast<size_t>(ch)] = static_cast<float>(bi - m * sc / std::sqrt(v + eps));
    }
    Tensor& y = c.output(0, DType::Float32, x.shape(), false);  // every element written
    const float* px = x.data<float>();
    float* py = y.data<float>();
    parallel_for(N * C, kElementwiseThreads, [&](int64_t nc) {
      const float ac = a[static_cast<size_t>(nc % C)], bc = b[static_cast<size_t>(nc % C)];
      const float* __restrict xi = px + nc * plane;
      float* __restrict yi = py + nc * plane;
      for (int64_t i = 0; i < plane; ++i) yi[i] = xi[i] * ac + bc;
    });
    return true;
  }
};

}  // namespace

void register_batchnorm_f32(KernelRegistry& r) {
  r.add_prepared("BatchNormalization", prepare_stateless<BatchNormF32>);
}

}  // namespace fixpoint::fk
