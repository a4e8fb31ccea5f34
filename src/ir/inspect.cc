#include "fixpoint/inspect.h"

namespace fixpoint {
namespace {

// Static shape of a tensor, or empty optional.
std::optional<Shape> static_shape(const Graph& g, const std::string& t) {
  const ValueInfo* vi = g.info(t);
  if (!vi || !vi->shape_known()) return std::nullopt;
  return vi->static_shape();
}

}  // namespace

ModelStats model_stats(const Graph& g) {
  ModelStats st;
  for (const auto& n : g.nodes) {
    LayerStats l;
    l.name = n.name;
    l.op = n.op_type;
    l.output = n.outputs.empty() ? "" : n.outputs[0];
    const ValueInfo* vi = l.output.empty() ? nullptr : g.info(l.output);
    l.output_shape = vi ? vi->shape_text() : "?";
    for (const auto& in : n.inputs) {
      auto it = g.initializers.find(in);
      if (it != g.initializers.end() && dtype_is_float(it->second.dtype())) l.params += it->second.numel();
    }
    auto out = l.output.empty() ? std::nullopt : static_shape(g, l.output);
    if (n.op_type == "Conv" || n.op_type == "ConvTranspose" || n.op_type == "Gemm" || n.op_type == "MatMul") {
      auto w = n.inputs.size() > 1 ? static_shape(g, n.inputs[1]) : std::nullopt;
      auto x = static_shape(g, n.inputs[0]);
      l.macs_known = false;
      if (n.op_type == "Conv" && out && w && w->size() >= 2) {
        int64_t k = 1;
        for (size_t i = 1; i < w->size(); ++i) k *= (*w)[i];  // Cin/group * kernel
        l.macs = shape_numel(*out) * k;
        l.macs_known = true;
      } else if (n.op_type == "ConvTranspose" && x && w && w->size() >= 2) {
        int64_t k = 1;
        for (size_t i = 1; i < w->size(); ++i) k *= (*w)[i];  // Cout/group * kernel
        l.macs = shape_numel(*x) * k;
        l.macs_known = true;
      } else if (n.op_type == "Gemm" && out && x && x->size() == 2) {
        int64_t K = n.attr_int("transA", 0) ? (*x)[0] : (*x)[1];
        l.macs = shape_numel(*out) * K;
        l.macs_known = true;
      } else if (n.op_type == "MatMul" && out && x && !x->empty()) {
        l.macs = shape_numel(*out) * x->back();
        l.macs_known = true;
      }
    }
    st.macs += l.macs;
    st.macs_complete = st.macs_complete && l.macs_known;
    ++st.op_counts[n.op_type];
    st.layers.push_back(l);
  }
  st.params = g.parameter_count();  // shared initializers counted once
  return st;
}

}  // namespace fixpoint
