#include "integer_kernels.h"

namespace fixpoint::qref {

void register_conv_kernels(std::map<std::string, QKernelFn>& r);
void register_elementwise_kernels(std::map<std::string, QKernelFn>& r);
void register_normalization_kernels(std::map<std::string, QKernelFn>& r);
void register_resize_kernels(std::map<std::string, QKernelFn>& r);

QKernelFn find_integer_kernel(const std::string& kind) {
  static const std::map<std::string, QKernelFn> table = [] {
    std::map<std::string, QKernelFn> r;
    register_conv_kernels(r);
    register_elementwise_kernels(r);
    register_normalization_kernels(r);
    register_resize_kernels(r);
    return r;
  }();
  auto it = table.find(kind);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace fixpoint::qref
