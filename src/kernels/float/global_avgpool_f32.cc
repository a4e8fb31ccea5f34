// GlobalAveragePool on float32, on the fast path: each (batch row, channel) plane summed left to
// right in float and divided by its cell count, the reference's chain, so the same bits; the
// planes are split over threads (one plane's sum is a serial chain: splitting it would change
// the order). Other types: the reference.
#include <algorithm>

#include "fast_float_ops.h"
#include "fixpoint/parallel.h"

namespace fixpoint::fk {
namespace {

// y[j] = (v[j plane] + v[j plane + 1] + ... in order, from +0) / plane for G consecutive planes,
// their chains interleaved.
template <int64_t G>
void mean_planes(const float* v, int64_t plane, float* y) {
  float acc[G] = {};
  for (int64_t i = 0; i < plane; ++i)
#pragma GCC unroll 8
    for (int64_t j = 0; j < G; ++j) acc[j] = acc[j] + v[j * plane + i];
  for (int64_t j = 0; j < G; ++j) y[j] = acc[j] / static_cast<float>(plane);
}

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
    // kGroup planes at a time: their chains are independent, so the adds overlap instead of
    // each waiting for the previous one's latency (the OCR detector's 10 pools: 3.4% -> 1.0% of its
    // time at one thread). Each chain is still the reference's, in order: the same bits.
    constexpr int64_t kGroup = 8;
    parallel_for((planes + kGroup - 1) / kGroup, c.threads, [&](int64_t t) {
      const int64_t p0 = t * kGroup, g = std::min(kGroup, planes - p0);
      const float* v = px + p0 * plane;
      if (g == kGroup)
        mean_planes<kGroup>(v, plane, py + p0);
      else
        for (int64_t j = 0; j < g; ++j) mean_planes<1>(v + j * plane, plane, py + p0 + j);
    });
    return true;
  }
};

}  // namespace

void register_global_avgpool_f32(KernelRegistry& r) {
  r.add_prepared("GlobalAveragePool", prepare_stateless<GlobalAvgPoolF32>);
}

}  // namespace fixpoint::fk
