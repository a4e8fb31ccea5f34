// GlobalMaxPool: the maximum code is the code of the maximum; the output keeps the input's encoding.
#include "quantize/prepare/prepare.h"

namespace fixpoint {

bool prepare_global_max_pool(CompileContext& cx, QOp& op) {
  if (!cx.all_inputs_quantized(op.node, 1)) return false;
  op.params = params::GlobalMaxPool{};
  cx.set_q(op.node.outputs[0], cx.q_of(op.node.inputs[0]));
  return true;
}

}  // namespace fixpoint
