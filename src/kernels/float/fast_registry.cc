// The registry of the fast float path: the reference kernels, plus prepared kernels.
#include "f32_kernels.h"
#include "fast_float_ops.h"
#include "fixpoint/float_kernels.h"

namespace fixpoint {

const KernelRegistry& fast_float_kernels() {
  static const KernelRegistry r = [] {
    KernelRegistry k = KernelRegistry::reference();
    if (fk::selected_f32_kernels()) {
      k.add_prepared("Conv", [](const Node& n, const Graph& g) {
        return fk::prepare_conv_f32(n, g, fk::selected_f32_kernels());
      });
      k.add_prepared("ConvTranspose", [](const Node& n, const Graph& g) {
        return fk::prepare_conv_transpose_f32(n, g, fk::selected_f32_kernels());
      });
      k.add_prepared("MatMul", [](const Node& n, const Graph& g) {
        return fk::prepare_matmul_f32(n, g, fk::selected_f32_kernels());
      });
      k.add_prepared("Gemm", [](const Node& n, const Graph& g) {
        return fk::prepare_gemm_f32(n, g, fk::selected_f32_kernels());
      });
      k.add_prepared("MaxPool", fk::prepare_maxpool_fast);
      fk::register_elementwise_f32(k);
      fk::register_unary_f32(k);
      fk::register_softmax_f32(k);
      fk::register_layernorm_f32(k);
      fk::register_resize_copy(k);
      fk::register_batchnorm_f32(k);
      fk::register_avgpool_f32(k);
      fk::register_global_avgpool_f32(k);
      k.add_fuser(fk::fuse_conv_relu);
      fk::register_pointwise_chains(k);
    }
    return k;
  }();
  return r;
}

std::string float_kernel_isa() {
  const fk::F32Kernels* k = fk::selected_f32_kernels();
  return k ? k->isa : "reference";
}

}  // namespace fixpoint
