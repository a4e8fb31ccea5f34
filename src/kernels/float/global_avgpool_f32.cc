// GlobalAveragePool on float32, on the fast path: each (batch row, channel) plane summed left to
// right in float and divided by its cell count, the reference's chain, so the same bits; the
// planes are split over threads (one plane's sum is a serial chain: splitting it would change
// the order). Other types: the reference.
#include <algorithm>

#include "fast_float_ops.h"
#include "fixpoint/parallel.h"

namespace fixpoint::fk {
namespace {

class GlobalAvgPoolF32 final : public PreparedKernel {
 public:
  bool run(KernelContext& c) const override {
    const Tensor& x = c.in(0);
    if (x.dtype() != DType::Float32 || x.rank() < 2) return false;
    Shape ys = {x.dim(0), x.dim(1)};
    for (int64_t i = 2; i < x.rank(); ++i) ys.push_back(1);
    const int64_t planes = x.dim(0) * x.dim(1), plane = x.rank() > 2 ? x.numel() / std::max<int64_t>(1, planes) : 1;
    Tensor& y = c.output(0, DType::Float32, ys, false);  // every plane's mean written
    const float* px = x.data<float>();
    float* py = y.data<float>();
    parallel_for(planes, c.threads, [&](int64_t nc) {
      const float* v = px + nc * plane;
      float acc = 0.0f;
      for (int64_t i = 0; i < plane; ++i) acc = acc + v[i];
      py[nc] = acc / static_cast<float>(plane);
    });
    return true;
  }
};

}  // namespace

void register_global_avgpool_f32(KernelRegistry& r) {
  r.add_prepared("GlobalAveragePool", prepare_stateless<GlobalAvgPoolF32>);
}

}  // namespace fixpoint::fk
