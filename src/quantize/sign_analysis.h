// Sign analysis: which tensors are never negative (unsigned codes).
#pragma once
#include <set>
#include <string>

#include "quantize/compile_context.h"

namespace fixpoint {

extern const std::set<std::string> kNonNegativeOps;

// After op is planned: its outputs join cx.nonneg when op's function is non-negative (and not
// composed with a later affine) or moves a non-negative tensor.
void track_nonnegative(CompileContext& cx, const QOp& op);

}  // namespace fixpoint
