// Add, Sub (16)-(17); Mul (18); Div (32).
#include "quantize/prepare/prepare.h"

#include <cmath>

#include "quantize/activation_fusion.h"

namespace fixpoint {

// Add/Sub (16)-(17), Mul (18).
bool prepare_binary(CompileContext& cx, QOp& op) {
  const Node& n = op.node;
  if (n.inputs.size() != 2) return false;
  for (const auto& in : n.inputs)
    if (cx.q_of(in).is_float() && !cx.g.initializers.count(in)) return false;
  if (!quantize_const_inputs(cx, op, 2)) return false;
  QParams qa = cx.q_of(op.node.inputs[0]), qb = cx.q_of(op.node.inputs[1]);
  double lo, hi;
  std::string out = fuse_activation(cx, op, &lo, &hi);
  if (std::isfinite(lo) && lo >= 0) cx.nonneg.insert(out);
  if ((n.op_type == "Mul" || n.op_type == "Div") && cx.nonneg.count(n.inputs[0]) && cx.nonneg.count(n.inputs[1]))
    cx.nonneg.insert(out);
  if (n.op_type == "Add" && cx.nonneg.count(n.inputs[0]) && cx.nonneg.count(n.inputs[1])) cx.nonneg.insert(out);
  QParams qy = activation_qparams(cx, out, out_bits(cx, op, out));
  cx.set_q(out, qy);
  bool wide = op.bits == 16 || qa.bits() == 16 || qb.bits() == 16 || qy.bits() == 16;
  if (n.op_type == "Mul" || n.op_type == "Div") {
    double M = n.op_type == "Mul" ? qa.scale * qb.scale / qy.scale : qa.scale / (qb.scale * qy.scale);  // (18), (32)
    fx::Multiplier mu = fx::make_multiplier(M, cx.pow2 && is_pow2(M));
    params::Scaled sp;
    sp.m = mu.m;
    sp.n = mu.n;
    sp.wide = wide;
    set_clamp(sp, qy, lo, hi);
    if (n.op_type == "Mul") op.params = params::Mul{sp};
    else op.params = params::Div{sp};
  } else {
    params::AddSub a;
    // (17)'s bound grows with |q_a|, |q_b|, not with the output width: 8-bit operands need L = 20.
    int L = op.bits == 16 || qa.bits() == 16 || qb.bits() == 16 ? 36 : 20;
    a.L = L;
    a.A = static_cast<int64_t>(fx::round_half_up(std::ldexp(qa.scale / qy.scale, L)));
    a.B = static_cast<int64_t>(fx::round_half_up(std::ldexp(qb.scale / qy.scale, L)));
    a.sign = n.op_type == "Sub" ? -1 : 1;
    a.wide = wide;
    set_clamp(a, qy, lo, hi);
    op.params = a;
  }
  return true;
}

}  // namespace fixpoint
