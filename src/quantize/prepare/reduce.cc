// ReduceSum / ReduceMean (31).
#include "quantize/prepare/prepare.h"

#include <cmath>

namespace fixpoint {

// ReduceSum / ReduceMean (31); the multiplier depends on the reduced count, known at run time.
bool prepare_reduce(CompileContext& cx, QOp& op) {
  if (!cx.all_inputs_quantized(op.node, 1)) return false;
  QParams qx = cx.q_of(op.node.inputs[0]);
  if (real_range(qx).first >= 0) cx.nonneg.insert(op.node.outputs[0]);
  QParams qy = activation_qparams(cx, op.node.outputs[0], op.bits);
  cx.set_q(op.node.outputs[0], qy);
  params::Reduce rd;
  rd.mean = op.node.op_type == "ReduceMean";
  set_clamp(rd, qy);  // the full code range
  op.params = rd;
  return true;
}

}  // namespace fixpoint
