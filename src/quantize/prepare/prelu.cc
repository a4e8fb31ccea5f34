// PRelu with a constant slope (33).
#include "quantize/prepare/prepare.h"

#include <cmath>

namespace fixpoint {

// PRelu with a constant slope (33): one multiplier for x >= 0, one per slope element below.
bool prepare_prelu(CompileContext& cx, QOp& op) {
  const Node& n = op.node;
  if (!cx.all_inputs_quantized(n, 1) || n.inputs.size() != 2 || !cx.g.initializers.count(n.inputs[1])) return false;
  const Tensor& slope = cx.g.initializers.at(n.inputs[1]);
  QParams qx = cx.q_of(n.inputs[0]);
  QParams qy = activation_qparams(cx, n.outputs[0], out_bits(cx, op, n.outputs[0]));
  cx.set_q(n.outputs[0], qy);
  // The slope's shape, right-aligned against x's rank (unidirectional broadcast).
  Tensor mult(DType::Int64, slope.shape()), shift(DType::Int64, slope.shape()), sign(DType::Int64, slope.shape());
  for (int64_t k = 0; k < slope.numel(); ++k) {
    double M = slope.get_f64(k) * qx.scale / qy.scale;
    fx::Multiplier mu = M == 0 ? fx::Multiplier{0, 0} : fx::make_multiplier(std::abs(M), false);
    mult.data<int64_t>()[k] = mu.m;
    shift.data<int64_t>()[k] = mu.n;
    sign.data<int64_t>()[k] = M < 0 ? -1 : 1;
  }
  fx::Multiplier pos = fx::make_multiplier(qx.scale / qy.scale, cx.pow2 && is_pow2(qx.scale / qy.scale));
  params::PRelu pr;
  pr.m = pos.m;
  pr.n = pos.n;
  pr.wide = op.bits == 16 || qx.bits() == 16;
  pr.neg_mult = mult;
  pr.neg_shift = shift;
  pr.neg_sign = sign;
  set_clamp(pr, qy);  // the full code range
  op.params = pr;
  op.node.inputs.resize(1);
  return true;
}

}  // namespace fixpoint
