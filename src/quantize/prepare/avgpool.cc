// AveragePool / GlobalAveragePool (19): M = s_x / s_y here; each window's count (ONNX's, with or
// without padding) divides exactly at run time.
#include "quantize/prepare/prepare.h"

namespace fixpoint {

bool prepare_avgpool(CompileContext& cx, QOp& op) {
  if (!cx.all_inputs_quantized(op.node, 1)) return false;
  QParams qx = cx.q_of(op.node.inputs[0]);
  if (real_range(qx).first >= 0) cx.nonneg.insert(op.node.outputs[0]);
  QParams qy = activation_qparams(cx, op.node.outputs[0], op.bits);
  // 1/count is rarely a power of two: the float form of (12) in pow2 mode too.
  fx::Multiplier mu = fx::make_multiplier(qx.scale / qy.scale, false);
  if (mu.n < -31) return false;  // (19)'s products must stay below 2^116 (fx::requantize_mean)
  cx.set_q(op.node.outputs[0], qy);
  params::AvgPool a;
  a.m = mu.m;
  a.n = mu.n;
  op.params = a;
  return true;
}

}  // namespace fixpoint
