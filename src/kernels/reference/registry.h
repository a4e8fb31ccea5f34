// Registration entry points of the float reference kernels, one per source file.
#pragma once
#include "fixpoint/runtime.h"

namespace fixpoint::ref {

#define FIXPOINT_REFERENCE_KERNEL_FILES(X) \
  X(elementwise_unary)                     \
  X(elementwise_binary)                    \
  X(clip)                                  \
  X(cast)                                  \
  X(conv)                                  \
  X(conv_transpose)                        \
  X(pool)                                  \
  X(gemm)                                  \
  X(matmul)                                \
  X(normalization)                         \
  X(softmax)                               \
  X(reduce)                                \
  X(argmax)                                \
  X(reshape)                               \
  X(constant)                              \
  X(concat)                                \
  X(split)                                 \
  X(slice)                                 \
  X(gather)                                \
  X(transpose)                             \
  X(expand_tile)                           \
  X(pad)                                   \
  X(resize)                                \
  X(depth_space)                           \
  X(quantize_linear)                       \
  X(cumsum)                                \
  X(range)                                 \
  X(scatter_nd)

#define FIXPOINT_DECLARE_REGISTER(name) void register_##name(KernelRegistry& r);
FIXPOINT_REFERENCE_KERNEL_FILES(FIXPOINT_DECLARE_REGISTER)
#undef FIXPOINT_DECLARE_REGISTER

}  // namespace fixpoint::ref
