// Sign analysis: tensors that are never negative get unsigned codes (one more bit of resolution):
// outputs of non-negative functions, and data movement of a non-negative tensor.
#include "quantize/sign_analysis.h"

namespace fixpoint {

const std::set<std::string> kNonNegativeOps = {"Relu", "Sigmoid", "HardSigmoid", "Softmax", "Abs", "Exp", "Sqrt"};

void track_nonnegative(CompileContext& cx, const QOp& op) {
  const Node& n = op.node;
  bool composed = op.is<params::Table>() && !op.fused.empty();  // its output is c(f(x)), not f(x)
  if (kNonNegativeOps.count(n.op_type) && !composed)
    for (const auto& o : n.outputs) cx.nonneg.insert(o);
  if ((kMoveOps.count(n.op_type) || n.op_type == "Resize" || n.op_type == "Upsample" || n.op_type == "Pad") &&
      !n.inputs.empty() && cx.nonneg.count(n.inputs[0]))
    for (const auto& o : n.outputs) cx.nonneg.insert(o);
}

}  // namespace fixpoint
