// The capability table: for each op, whether the fixed-point engine runs it with these
// attributes and operands, and if not, why. The compiler asks this before preparing an op, so
// nothing gets a precision it has no kernel for (docs/partitioning.md §1).
#include <fnmatch.h>

#include <functional>

#include "fixpoint/graph_match.h"
#include "fixpoint/partition.h"

namespace fixpoint {

const std::set<std::string> kMoveOps = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice",
                                        "Split", "Gather", "DepthToSpace", "SpaceToDepth", "Identity", "Dropout",
                                        "MaxPool", "Expand", "Tile", "ReduceMax", "ReduceMin"};
const std::set<std::string> kLutOps = {"Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Exp", "Erf", "Softplus",
                                       "LeakyRelu", "Elu", "Relu", "Clip", "Abs", "Neg", "Sqrt", "Reciprocal",
                                       "Gelu", "Pow"};

bool is_float_activation(const Graph& g, const std::string& t) {
  if (g.initializers.count(t)) return false;
  const ValueInfo* vi = g.info(t);
  return !vi || vi->dtype == DType::Float32 || vi->dtype == DType::Undefined;
}

bool is_linear_resize(const Node& n) {
  std::string m = n.attr_string("mode", "nearest");
  return (m == "linear" || m == "bilinear" || m == "trilinear") &&
         n.attr_string("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize";
}

namespace {
bool float_const(const Graph& g, const std::string& t) {
  const Tensor* c = match::constant(g, t);
  return c && c->dtype() == DType::Float32;
}
Capability yes() { return {true, ""}; }
Capability no_op(const std::string& why) { return {false, "unsupported op: " + why}; }
Capability no_attr(const std::string& why) { return {false, "unsupported attribute: " + why}; }

// Every input from `first` on is a constant (Clip bounds, Pow exponent, Reshape shape...).
bool consts_from(const Graph& g, const Node& n, size_t first) {
  for (size_t i = first; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && !match::constant(g, n.inputs[i])) return false;
  return true;
}

Capability weights_op(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || !float_const(g, n.inputs[1])) return no_attr("weights are not a float constant");
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && !float_const(g, n.inputs[2])) return no_attr("bias is not a float constant");
  return yes();
}

Capability pad(const Graph& g, const Node& n) {
  std::string mode = n.attr_string("mode", "constant");
  if (mode != "constant") return yes();
  double v = n.opset < 11 ? n.attr_float("value", 0) : 0.0;
  if (n.opset >= 11 && n.inputs.size() > 2 && !n.inputs[2].empty()) {
    const Tensor* c = match::constant(g, n.inputs[2]);
    if (!c) return no_attr("pad value is not a constant");
    v = c->numel() ? c->get_f64(0) : 0.0;
  }
  if (v != 0.0) return no_attr(cat("constant pad value ", v, " (integer codes pad with 0 only)"));
  if (!consts_from(g, n, 1)) return no_attr("pads are not constants");
  return yes();
}

using Rule = std::function<Capability(const Graph&, const Node&)>;

const std::map<std::string, Rule>& table() {
  static const std::map<std::string, Rule> t = [] {
    std::map<std::string, Rule> r;
    r["Conv"] = weights_op;
    r["ConvTranspose"] = weights_op;
    r["Gemm"] = [](const Graph& g, const Node& n) {
      if (n.attr_int("transA", 0)) return no_attr("transA=1");
      Capability c = weights_op(g, n);
      if (c.supported && match::constant(g, n.inputs[1])->rank() != 2) return no_attr("B is not 2-D");
      return c;
    };
    r["MatMul"] = [](const Graph& g, const Node& n) {
      if (const Tensor* b = match::constant(g, n.inputs[1])) {
        if (b->dtype() != DType::Float32 || b->rank() != 2) return no_attr("constant B is not a 2-D float matrix");
        return yes();
      }
      return yes();  // two activations: integer product of codes (docs/arithmetic.md §9)
    };
    for (const char* op : {"Add", "Sub", "Mul", "Div"})
      r[op] = [](const Graph& g, const Node& n) {
        for (const auto& in : n.inputs)
          if (!is_float_activation(g, in) && !float_const(g, in)) return no_attr("an operand is an integer tensor");
        return yes();
      };
    r["Concat"] = [](const Graph& g, const Node& n) {
      for (const auto& in : n.inputs)
        if (!is_float_activation(g, in) && !float_const(g, in)) return no_attr("an operand is an integer tensor");
      return yes();
    };
    for (const char* op : {"AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Softmax"})
      r[op] = [](const Graph&, const Node&) { return yes(); };
    r["LayerNormalization"] = r["InstanceNormalization"] = [](const Graph& g, const Node& n) {
      if (!consts_from(g, n, 1)) return no_attr("scale/bias are not constants");
      return yes();
    };
    r["Resize"] = r["Upsample"] = [](const Graph& g, const Node& n) {
      std::string mode = n.attr_string("mode", "nearest");
      if (mode != "nearest" && !is_linear_resize(n)) {
        if (mode != "cubic" && n.attr_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
          return no_attr("linear tf_crop_and_resize (extrapolation) has no integer kernel");
        return no_attr(cat("mode '", mode, "' (nearest and linear have integer kernels)"));
      }
      if (!consts_from(g, n, 1)) return no_attr("scales/sizes are not constants");
      return yes();
    };
    r["Pad"] = pad;
    r["PRelu"] = [](const Graph& g, const Node& n) {
      if (!consts_from(g, n, 1)) return no_attr("slope is not a constant");
      return yes();
    };
    for (const char* op : {"ReduceMean", "ReduceSum"})
      r[op] = [](const Graph& g, const Node& n) {
        if (!consts_from(g, n, 1)) return no_attr("axes are not constants");
        return yes();
      };
    for (const auto& op : kMoveOps) r[op] = [](const Graph&, const Node&) { return yes(); };
    for (const auto& op : kLutOps)
      r[op] = [](const Graph& g, const Node& n) {
        if (!consts_from(g, n, 1)) return no_attr(cat(n.op_type == "Pow" ? "exponent" : "parameters", " not constant"));
        return yes();
      };
    return r;
  }();
  return t;
}

}  // namespace

Capability accelerator_supports(const Graph& g, const Node& n) {
  if (!n.domain.empty()) return no_op(cat("custom domain '", n.domain, "'"));
  bool float_out = false;
  for (const auto& o : n.outputs) float_out = float_out || (!o.empty() && is_float_activation(g, o));
  if (!float_out) return no_op(cat(n.op_type, " on integer tensors (shape/index arithmetic; folds away when --shape binds the inputs)"));
  auto it = table().find(n.op_type);
  if (it == table().end()) return no_op(cat("no integer kernel for ", n.op_type));
  if (!n.inputs.empty() && !n.inputs[0].empty() && !is_float_activation(g, n.inputs[0]) && !float_const(g, n.inputs[0]))
    return no_attr("the data input is an integer tensor");
  return it->second(g, n);
}

bool layer_matches(const std::string& pattern, const Node& node) {
  if (pattern.rfind("op:", 0) == 0) return node.op_type == pattern.substr(3);
  if (fnmatch(pattern.c_str(), node.name.c_str(), 0) == 0) return true;
  for (const auto& o : node.outputs)
    if (!o.empty() && fnmatch(pattern.c_str(), o.c_str(), 0) == 0) return true;
  return false;
}

bool layer_matches_any(const std::vector<std::string>& patterns, const Node& node) {
  for (const auto& p : patterns)
    if (layer_matches(p, node)) return true;
  return false;
}

}  // namespace fixpoint
