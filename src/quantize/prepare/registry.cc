// ONNX op type -> the prepare steps that can take it, tried in order. The capability table
// (src/partition/capability.cc) has already said the accelerator runs the node; a step still
// declines when an operand has no integer encoding (a tensor calibration never reached).
#include "quantize/prepare/prepare.h"

#include <map>

namespace fixpoint {

const std::vector<PrepareFn>& prepare_steps(const std::string& op_type) {
  static const std::map<std::string, std::vector<PrepareFn>> table = [] {
    std::map<std::string, std::vector<PrepareFn>> t;
    for (const char* op : {"Conv", "ConvTranspose", "Gemm"}) t[op] = {prepare_matmul_like};
    t["MatMul"] = {prepare_matmul_like, prepare_matmul2};  // constant B, else two activations
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) t[op] = {prepare_binary};
    t["Concat"] = {prepare_concat};
    t["PRelu"] = {prepare_prelu};
    t["ReduceMean"] = t["ReduceSum"] = {prepare_reduce};
    t["AveragePool"] = t["GlobalAveragePool"] = {prepare_avgpool};
    t["GlobalMaxPool"] = {prepare_global_max_pool};
    t["Softmax"] = {prepare_softmax};
    t["LayerNormalization"] = {prepare_layernorm};
    t["InstanceNormalization"] = {prepare_instancenorm};
    t["Resize"] = t["Upsample"] = {prepare_resize_linear, prepare_move};  // linear, else nearest
    t["Pad"] = {prepare_move};
    for (const auto& op : kMoveOps) t[op] = {prepare_move};
    for (const auto& op : kLutOps) t[op] = {prepare_lut};
    return t;
  }();
  static const std::vector<PrepareFn> none;
  auto it = table.find(op_type);
  return it == table.end() ? none : it->second;
}

}  // namespace fixpoint
