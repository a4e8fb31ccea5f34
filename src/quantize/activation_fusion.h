// Activation fusion (docs/arithmetic.md §5.1).
#pragma once
#include <string>

#include "quantize/compile_context.h"

namespace fixpoint {

// Fuses a following Relu/Clip into op when it is the only consumer and runs on the accelerator:
// returns the op's output tensor, and the clamp in [*lo, *hi] (infinite when nothing fused).
std::string fuse_activation(CompileContext& cx, QOp& op, double* lo, double* hi);

// MatMul(x, W) + c with a constant c of one value per output column (shape [N] or [1, .., N]):
// c becomes the op's bias, as in Gemm (exporters split Linear layers on 3-D inputs this way).
const Tensor* fuse_bias_add(CompileContext& cx, QOp& op, int64_t N);

}  // namespace fixpoint
