// LayerNormalization (26)-(30) and InstanceNormalization (§5.19).
#include "quantize/prepare/prepare.h"

#include <cmath>

#include "fixpoint/graph_match.h"

namespace fixpoint {

namespace {

// The constants of (26)-(30) for `per` affine indices (gamma/beta of one value broadcast).
bool prepare_normalize(CompileContext& cx, QOp& op, const Tensor* gamma, const Tensor* beta, int64_t per, params::Normalize* out) {
  const Node& n = op.node;
  QParams qx = cx.q_of(n.inputs[0]);
  QParams qy = activation_qparams(cx, n.outputs[0], out_bits(cx, op, n.outputs[0]));
  Tensor mult(DType::Int64, {per}), shift(DType::Int64, {per}), sign(DType::Int64, {per}), bq(DType::Int64, {per});
  for (int64_t j = 0; j < per; ++j) {
    double G = gamma->get_f64(gamma->numel() == 1 ? 0 : j) / qy.scale;
    double bv = beta ? beta->get_f64(beta->numel() == 1 ? 0 : j) : 0.0;
    fx::Multiplier mu = G == 0 ? fx::Multiplier{0, 0} : fx::make_multiplier(std::abs(G), false);
    if (mu.n < -30) return false;  // (30) needs n_j + P - 16 >= 0
    mult.data<int64_t>()[j] = mu.m;
    shift.data<int64_t>()[j] = mu.n;
    sign.data<int64_t>()[j] = G < 0 ? -1 : 1;
    bq.data<int64_t>()[j] = static_cast<int64_t>(fx::round_half_up(std::ldexp(bv / qy.scale, 16)));
  }
  double eps = n.attr_float("epsilon", 1e-5f);
  double EPS = fx::round_half_up(std::ldexp(eps / (qx.scale * qx.scale), 16));  // (27)
  if (!(EPS < 0x1p62)) return false;  // a tiny input scale: (27) stays in int64 or the layer runs in float
  cx.set_q(n.outputs[0], qy);
  *out = params::Normalize{mult, shift, sign, bq, static_cast<int64_t>(EPS)};
  return true;
}

}  // namespace

// LayerNormalization over the last axis (26)-(30).
bool prepare_layernorm(CompileContext& cx, QOp& op) {
  const Node& n = op.node;
  if (!cx.all_inputs_quantized(n, 1) || n.inputs.size() < 2) return false;
  int64_t axis = n.attr_int("axis", -1);
  const ValueInfo* vi = cx.g.info(n.inputs[0]);
  int64_t rank = vi && vi->shape ? static_cast<int64_t>(vi->shape->size()) : -1;
  if (!(axis == -1 || (rank > 0 && axis == rank - 1))) return false;
  const Tensor* gamma = match::constant(cx.g, n.inputs[1]);
  const Tensor* beta = n.inputs.size() > 2 && !n.inputs[2].empty() ? match::constant(cx.g, n.inputs[2]) : nullptr;
  if (!gamma || (n.inputs.size() > 2 && !n.inputs[2].empty() && !beta)) return false;
  int64_t per = gamma->numel();
  if (beta && beta->numel() != per && beta->numel() != 1) return false;
  if (beta && beta->numel() != per) per = std::max(per, beta->numel());
  params::LayerNorm ln;
  if (!prepare_normalize(cx, op, gamma, beta, per, &ln)) return false;
  op.params = ln;
  op.node.inputs.resize(1);
  return true;
}

// InstanceNormalization (§5.19): (26)-(30) over each (n, c) plane, gamma/beta per channel.
bool prepare_instancenorm(CompileContext& cx, QOp& op) {
  const Node& n = op.node;
  if (!cx.all_inputs_quantized(n, 1) || n.inputs.size() != 3) return false;
  const Tensor* gamma = match::constant(cx.g, n.inputs[1]);
  const Tensor* beta = match::constant(cx.g, n.inputs[2]);
  if (!gamma || !beta || gamma->rank() != 1 || beta->numel() != gamma->numel()) return false;
  params::InstanceNorm in;
  if (!prepare_normalize(cx, op, gamma, beta, gamma->numel(), &in)) return false;
  op.params = in;
  op.node.inputs.resize(1);
  return true;
}

}  // namespace fixpoint
