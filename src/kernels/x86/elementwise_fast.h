// Optimized 8/16-bit Add/Sub, Mul and table lookups (see elementwise_fast.cc),
// AveragePool and GlobalAveragePool (avgpool_fast.cc), Concat (concat_fast.cc), Softmax
// (softmax_fast.cc), MatMul of two activations (matmul2_fast.cc) and LayerNormalization /
// InstanceNormalization (layernorm_fast.cc). Each returns false,
// leaving the context untouched, when the op is outside the cases it handles.
#pragma once
#include "../reference/integer/integer_kernels.h"

namespace fixpoint::xk {

// 8- and 16-bit codes (|q - z| < 2^16, which keeps the fast paths' products in int64).
bool narrow(DType t);

bool addsub_fast(qref::QContext& c);
bool mul_fast(qref::QContext& c);
bool lut_fast(qref::QContext& c);
bool avgpool_fast(qref::QContext& c);
bool concat_fast(qref::QContext& c);
bool softmax_fast(qref::QContext& c);
bool matmul2_fast(qref::QContext& c);
bool layernorm_fast(qref::QContext& c);
bool instancenorm_fast(qref::QContext& c);

}  // namespace fixpoint::xk
