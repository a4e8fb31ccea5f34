// Linear Resize (34): the output is re-calibrated (interpolation stays inside the input's range).
#include "quantize/prepare/prepare.h"

namespace fixpoint {

bool prepare_resize_linear(CompileContext& cx, QOp& op) {
  const Node& n = op.node;
  if (!is_linear_resize(n) || !cx.all_inputs_quantized(n, 1)) return false;
  if (cx.nonneg.count(n.inputs[0])) cx.nonneg.insert(n.outputs[0]);
  QParams qy = activation_qparams(cx, n.outputs[0], out_bits(cx, op, n.outputs[0]));
  cx.set_q(n.outputs[0], qy);
  params::ResizeLinear r;
  fx::Multiplier mu = fx::make_multiplier(cx.q_of(n.inputs[0]).scale / qy.scale, false);
  r.m = mu.m;
  r.n = mu.n;
  set_clamp(r, qy);  // the full code range
  op.params = r;
  return true;
}

}  // namespace fixpoint
