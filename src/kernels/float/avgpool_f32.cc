// AveragePool on float32, on the fast path: the reference's plane definition
// (src/kernels/reference/average_pool_plane.h, so the same bits by construction) with the
// (batch row, channel) planes split between threads (each plane alone: any split gives the
// same bits). Other types: the reference.
#include "../reference/average_pool_plane.h"
#include "fast_float_ops.h"
#include "fixpoint/parallel.h"

namespace fixpoint::fk {
namespace {

class AvgPoolF32 final : public PreparedKernel {
 public:
  bool run(KernelContext& c) const override {
    const Tensor& x = c.in(0);
    if (x.dtype() != DType::Float32 || x.rank() < 3 || x.rank() > 5) return false;
    const ref::Window w = ref::sliding_window(c.node, x.shape(), {}, true);
    const ref::Window w3 = ref::to_3d(w);
    const bool include_pad = c.node.attr_int("count_include_pad", 0) != 0;
    Shape ys = {x.dim(0), x.dim(1)};
    ys.insert(ys.end(), w.out.begin(), w.out.end());
    Tensor& y = c.output(0, DType::Float32, ys, false);  // every element written
    const int64_t in_plane = w3.in[0] * w3.in[1] * w3.in[2], out_plane = w3.out[0] * w3.out[1] * w3.out[2];
    const float* px = x.data<float>();
    float* py = y.data<float>();
    parallel_for(x.dim(0) * x.dim(1), c.threads, [&](int64_t nc) {
      ref::average_pool_plane(w3, include_pad, px + nc * in_plane, py + nc * out_plane);
    });
    return true;
  }
};

}  // namespace

void register_avgpool_f32(KernelRegistry& r) { r.add_prepared("AveragePool", prepare_stateless<AvgPoolF32>); }

}  // namespace fixpoint::fk
