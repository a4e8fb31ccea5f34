// MatMul of two activations (21).
#include "quantize/prepare/prepare.h"

#include <cmath>

#include "quantize/activation_fusion.h"

namespace fixpoint {

// MatMul of two activations (21).
bool prepare_matmul2(CompileContext& cx, QOp& op) {
  const Node& n = op.node;
  if (n.inputs.size() != 2 || !cx.all_inputs_quantized(n, 2)) return false;
  QParams qa = cx.q_of(n.inputs[0]), qb = cx.q_of(n.inputs[1]);
  double lo, hi;
  std::string out = fuse_activation(cx, op, &lo, &hi);
  if (std::isfinite(lo) && lo >= 0) cx.nonneg.insert(out);
  QParams qy = activation_qparams(cx, out, out_bits(cx, op, out));
  cx.set_q(out, qy);
  double M = qa.scale * qb.scale / qy.scale;
  fx::Multiplier mu = fx::make_multiplier(M, cx.pow2 && is_pow2(M));
  params::MatMul2 mm;
  mm.m = mu.m;
  mm.n = mu.n;
  set_clamp(mm, qy, lo, hi);
  op.params = mm;
  return true;
}

}  // namespace fixpoint
