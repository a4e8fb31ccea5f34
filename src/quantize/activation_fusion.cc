// Activation fusion (docs/arithmetic.md §5.1): a Relu/Clip read only by a Conv, Gemm, MatMul or
// binary op becomes that op's output clamp; a MatMul's per-column constant Add becomes its bias.
#include "quantize/activation_fusion.h"

#include "fixpoint/graph_match.h"

namespace fixpoint {

// Fuses a following Relu/Clip into op when it is the only consumer; returns the output tensor.
std::string fuse_activation(CompileContext& cx, QOp& op, double* lo, double* hi) {
  *lo = -std::numeric_limits<double>::infinity();
  *hi = std::numeric_limits<double>::infinity();
  std::string out = op.node.outputs[0];
  if (cx.g.is_graph_output(out)) return out;
  const Node* act = match::single_consumer(cx.g, out);
  if (!act || (act->op_type != "Relu" && act->op_type != "Clip") || act->inputs[0] != out || !cx.layer_allowed(*act)) return out;
  double a, b;
  if (!match::clip_bounds(cx.g, *act, &a, &b)) return out;
  // §2.6: a QDQ model that quantizes the pre-activation tensor on its own grid rounds twice (to
  // it, then to the activation's output); fusing would round once and depart from the model.
  auto pre = cx.qdq.activations.find(out), post = cx.qdq.activations.find(act->outputs[0]);
  if (pre != cx.qdq.activations.end() &&
      (post == cx.qdq.activations.end() || pre->second.scale != post->second.scale ||
       pre->second.zero_point != post->second.zero_point || pre->second.type != post->second.type))
    return out;
  *lo = a;
  *hi = b;
  cx.consumed.insert(act->name);
  op.fused.push_back(act->name);
  op.node.outputs[0] = act->outputs[0];
  return act->outputs[0];
}

// MatMul(x, W) + c with a constant c of one value per output column (shape [N] or [1, .., N]):
// c becomes the op's bias, as in Gemm (exporters split Linear layers on 3-D inputs this way).
const Tensor* fuse_bias_add(CompileContext& cx, QOp& op, int64_t N) {
  std::string out = op.node.outputs[0];
  if (cx.g.is_graph_output(out)) return nullptr;
  const Node* add = match::single_consumer(cx.g, out);
  if (!add || add->op_type != "Add" || !add->domain.empty() || add->inputs.size() != 2 || !cx.layer_allowed(*add)) return nullptr;
  const std::string& c = add->inputs[0] == out ? add->inputs[1] : add->inputs[0];
  const Tensor* t = match::constant(cx.g, c);
  if (!t || t->dtype() != DType::Float32 || t->numel() != N || t->rank() < 1 || t->dim(-1) != N) return nullptr;
  const ValueInfo* vy = cx.g.info(out);
  if (!vy || !vy->shape || static_cast<int64_t>(vy->shape->size()) < t->rank()) return nullptr;  // c must not add dims
  cx.consumed.insert(add->name);
  op.fused.push_back(add->name);
  op.node.outputs[0] = add->outputs[0];
  return t;
}

}  // namespace fixpoint
