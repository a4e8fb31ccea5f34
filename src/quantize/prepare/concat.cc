// Concat (19): each input requantized to the output scale.
#include "quantize/prepare/prepare.h"

#include <cmath>

namespace fixpoint {

bool prepare_concat(CompileContext& cx, QOp& op) {
  const Node& n = op.node;
  for (const auto& in : n.inputs)
    if (cx.q_of(in).is_float() && !cx.g.initializers.count(in)) return false;
  if (!quantize_const_inputs(cx, op, n.inputs.size())) return false;
  // Output range: the largest real range of the inputs (no input saturates); width: the op's.
  bool nonneg = true;
  double range = 0;
  for (const auto& in : op.node.inputs) {
    QParams q = cx.q_of(in);
    auto [lo, hi] = real_range(q);
    nonneg = nonneg && lo >= 0;
    // A symmetric code's extra negative step (-128) is not part of its calibrated range.
    range = std::max({range, hi, q.zero_point == 0 ? 0.0 : -lo});
  }
  QParams qy;
  qy.type = code_type(out_bits(cx, op, n.outputs[0]), nonneg);
  qy.scale = activation_scale(range, qy.type, cx.pow2);
  if (nonneg) cx.nonneg.insert(n.outputs[0]);
  cx.set_q(n.outputs[0], qy);
  Tensor mult(DType::Int64, {static_cast<int64_t>(op.node.inputs.size())});
  Tensor shift(DType::Int64, mult.shape());  // (Tensor copies share storage)
  for (size_t i = 0; i < op.node.inputs.size(); ++i) {
    double M = cx.q_of(op.node.inputs[i]).scale / qy.scale;
    fx::Multiplier mu = fx::make_multiplier(M, cx.pow2 && is_pow2(M));
    mult.data<int64_t>()[i] = mu.m;
    shift.data<int64_t>()[i] = mu.n;
  }
  op.params = params::Concat{mult, shift};
  return true;
}

}  // namespace fixpoint
