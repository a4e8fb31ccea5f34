// The integer reference kernels, one per op kind (the kKind of its params struct in
// include/fixpoint/op_params.h), one file each: <kind>.cc.
#include "integer_kernels.h"

namespace fixpoint::qref {

#define FIXPOINT_INTEGER_KERNELS(X)                                                                          \
  X(conv) X(matmul) X(conv_transpose) X(matmul2) X(addsub) X(mul) X(div) X(concat) X(prelu) X(reduce) X(avgpool) \
  X(globalmaxpool) X(lut) X(softmax) X(layernorm) X(instancenorm) X(resize_linear)

#define FIXPOINT_DECLARE(kind) void k_##kind(QContext& c);
FIXPOINT_INTEGER_KERNELS(FIXPOINT_DECLARE)
#undef FIXPOINT_DECLARE

QKernelFn find_integer_kernel(const std::string& kind) {
  static const std::map<std::string, QKernelFn> table = {
#define FIXPOINT_ENTRY(kind) {#kind, k_##kind},
      FIXPOINT_INTEGER_KERNELS(FIXPOINT_ENTRY)
#undef FIXPOINT_ENTRY
  };
  auto it = table.find(kind);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace fixpoint::qref
