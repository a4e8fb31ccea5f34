// Softmax (23).
#include "quantize/prepare/prepare.h"

#include <cmath>

namespace fixpoint {

// Softmax (23): E[d] = R(2^30 exp(-s_x d)) for d = 0 .. span of the input codes; the output is
// unsigned with the fixed scale 1/q_max (pow2 mode: 2^-bits), Q = 1/s_y.
bool prepare_softmax(CompileContext& cx, QOp& op) {
  const Node& n = op.node;
  if (!cx.all_inputs_quantized(n, 1)) return false;
  QParams qx = cx.q_of(n.inputs[0]);
  fx::Range rx = fx::range_of(qx.type);
  QParams qy;
  const int bits = out_bits(cx, op, n.outputs[0]);
  qy.type = code_type(bits, true);
  int64_t Q = cx.pow2 ? (int64_t{1} << (bits == 16 ? 16 : 8)) : fx::range_of(qy.type).hi;
  qy.scale = 1.0 / static_cast<double>(Q);
  cx.nonneg.insert(n.outputs[0]);
  cx.set_q(n.outputs[0], qy);
  Tensor table(DType::Int32, {rx.hi - rx.lo + 1});
  for (int64_t d = 0; d < table.numel(); ++d)
    table.data<int32_t>()[d] = static_cast<int32_t>(fx::round_half_up(std::ldexp(std::exp(-qx.scale * static_cast<double>(d)), 30)));
  op.params = params::Softmax{table, Q};
  return true;
}

}  // namespace fixpoint
