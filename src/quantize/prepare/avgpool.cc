// AveragePool / GlobalAveragePool (31).
#include "quantize/prepare/prepare.h"

#include <cmath>

namespace fixpoint {

bool prepare_avgpool(CompileContext& cx, QOp& op) {
  if (!cx.all_inputs_quantized(op.node, 1)) return false;
  QParams qx = cx.q_of(op.node.inputs[0]);
  QParams qy = activation_qparams(cx, op.node.outputs[0], op.bits);
  if (real_range(qx).first >= 0) {
    cx.nonneg.insert(op.node.outputs[0]);
    qy = activation_qparams(cx, op.node.outputs[0], op.bits);
  }
  cx.set_q(op.node.outputs[0], qy);
  op.params = params::AvgPool{op.bits == 16 || qx.bits() == 16};
  return true;
}

}  // namespace fixpoint
