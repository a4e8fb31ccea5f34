// Data movement (reshapes, transposes, slices, gathers, max pools, nearest Resize, Pad): codes
// pass through unchanged, so every data output keeps the input's encoding. Side outputs that are
// not data (Dropout's bool mask, MaxPool's int64 indices) have no encoding.
#include "quantize/prepare/prepare.h"

namespace fixpoint {

bool prepare_move(CompileContext& cx, QOp& op) {
  const Node& n = op.node;
  if (!cx.all_inputs_quantized(n, 1)) return false;
  // A constant pad (the capability table admits value 0 only) pads with code 0: real 0 only when z = 0.
  if (n.op_type == "Pad" && n.attr_string("mode", "constant") == "constant" && cx.q_of(n.inputs[0]).zero_point != 0)
    return false;
  op.params = params::Move{};
  bool side_outputs = n.op_type == "Dropout" || n.op_type == "MaxPool";
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty()) cx.set_q(n.outputs[i], side_outputs && i > 0 ? QParams{} : cx.q_of(n.inputs[0]));
  return true;
}

}  // namespace fixpoint
