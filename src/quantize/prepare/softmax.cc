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
  // §2.6: an imported QDQ model's own pair on the output (ONNX Runtime's quantizer gives Softmax
  // 1/256, zero point 0) is kept where (23) can compute it: an unsigned code with zero point 0
  // and 1/s_y a whole number Q.
  auto qd = cx.qdq.activations.find(n.outputs[0]);
  if (qd != cx.qdq.activations.end() && qd->second.type == qy.type) {
    const double inv = 1.0 / qd->second.scale;
    if (qd->second.zero_point == 0 && std::abs(inv - std::round(inv)) <= 1e-6 * inv) {
      Q = static_cast<int64_t>(std::round(inv));
      qy = QParams{qd->second.type, qd->second.scale, 0, true};
    } else {
      cx.warn_precision(n.name, cat("its QDQ pair (scale ", qd->second.scale, ", zero point ", qd->second.zero_point,
                                    ") is not 1/Q with zero point 0; the output uses scale 1/", Q, " instead"));
    }
  }
  cx.nonneg.insert(n.outputs[0]);
  cx.set_q(n.outputs[0], qy);
  Tensor table(DType::Int32, {rx.hi - rx.lo + 1});
  for (int64_t d = 0; d < table.numel(); ++d)
    table.data<int32_t>()[d] = static_cast<int32_t>(fx::round_half_up(std::ldexp(std::exp(-qx.scale * static_cast<double>(d)), 30)));
  op.params = params::Softmax{table, Q};
  return true;
}

}  // namespace fixpoint
