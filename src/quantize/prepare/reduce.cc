// ReduceSum / ReduceMean (31): M = s_x / s_y here; a mean divides by its count (the shape's,
// known at run time) exactly, so no constant depends on the shape.
#include "quantize/prepare/prepare.h"

namespace fixpoint {

bool prepare_sum_encoding(CompileContext& cx, QOp& op, QParams* qy, fx::Multiplier* mu) {
  if (!cx.all_inputs_quantized(op.node, 1)) return false;
  QParams qx = cx.q_of(op.node.inputs[0]);
  if (real_range(qx).first >= 0) cx.nonneg.insert(op.node.outputs[0]);
  *qy = activation_qparams(cx, op.node.outputs[0], out_bits(cx, op, op.node.outputs[0]));
  // 1/count is rarely a power of two: the float form of (12) in pow2 mode too.
  *mu = fx::make_multiplier(qx.scale / qy->scale, false);
  if (mu->n < -31) return false;  // the products of (31) must stay below 2^116 (fx::requantize_mean)
  cx.set_q(op.node.outputs[0], *qy);
  return true;
}

bool prepare_reduce(CompileContext& cx, QOp& op) {
  QParams qy;
  fx::Multiplier mu;
  if (!prepare_sum_encoding(cx, op, &qy, &mu)) return false;
  params::Reduce rd;
  rd.mean = op.node.op_type == "ReduceMean";
  rd.m = mu.m;
  rd.n = mu.n;
  set_clamp(rd, qy);  // the full code range
  op.params = rd;
  return true;
}

}  // namespace fixpoint
