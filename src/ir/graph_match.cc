#include "fixpoint/graph_match.h"

#include <limits>

#include <cmath>

namespace fixpoint::match {

const Node* producer(const Graph& g, const std::string& t) {
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs)
      if (o == t) return &n;
  return nullptr;
}

const Node* single_consumer(const Graph& g, const std::string& t) {
  const Node* found = nullptr;
  int count = 0;
  for (const auto& node : g.nodes)
    for (const auto& in : node.inputs)
      if (in == t) {
        found = &node;
        ++count;
      }
  return count == 1 ? found : nullptr;
}

bool inner(const Graph& g, const std::string& t, int uses) {
  if (t.empty()) return false;
  int n = 0;  // counted in place: passes call this per node, and a use_counts() map per call was
              // a third of every compile of the OCR recognizer
  for (const auto& node : g.nodes)
    for (const auto& in : node.inputs) n += in == t;
  return n == uses && !g.is_graph_output(t);
}

const Tensor* constant(const Graph& g, const std::string& t) {
  auto it = g.initializers.find(t);
  return it == g.initializers.end() ? nullptr : &it->second;
}

bool clip_bounds(const Graph& g, const Node& n, double* lo, double* hi) {
  *lo = -std::numeric_limits<double>::infinity();
  *hi = std::numeric_limits<double>::infinity();
  if (n.op_type == "Relu") {
    *lo = 0;
    return true;
  }
  if (n.op_type != "Clip") return false;
  if (n.opset < 11) {
    if (n.has_attr("min")) *lo = n.attr_float("min", 0);
    if (n.has_attr("max")) *hi = n.attr_float("max", 0);
    return true;
  }
  for (size_t k : {1, 2}) {
    if (k >= n.inputs.size() || n.inputs[k].empty()) continue;
    const Tensor* b = constant(g, n.inputs[k]);
    if (!b) return false;
    (k == 1 ? *lo : *hi) = b->get_f64(0);
  }
  return true;
}

bool scalar_const(const Graph& g, const std::string& t, double v) {
  const Tensor* c = constant(g, t);
  return c && c->numel() == 1 && dtype_is_float(c->dtype()) &&
         std::abs(c->get_f64(0) - v) <= 1e-6 * std::max(1.0, std::abs(v));
}

bool clip_of_x_plus_3(const Graph& g, const std::string& t, std::string* x, std::vector<std::string>* nodes) {
  const Node* c = producer(g, t);
  if (!c || c->op_type != "Clip" || !c->domain.empty() || !inner(g, t)) return false;
  if (c->opset < 11) {  // bounds as attributes
    if (!c->has_attr("min") || !c->has_attr("max") || c->attr_float("min", 1) != 0.0f || c->attr_float("max", 0) != 6.0f)
      return false;
  } else if (c->inputs.size() < 3 || !scalar_const(g, c->inputs[1], 0.0) || !scalar_const(g, c->inputs[2], 6.0)) {
    return false;
  }
  const Node* a = producer(g, c->inputs[0]);
  if (!a || a->op_type != "Add" || !inner(g, c->inputs[0])) return false;
  int k = scalar_const(g, a->inputs[1], 3.0) ? 0 : scalar_const(g, a->inputs[0], 3.0) ? 1 : -1;
  if (k < 0) return false;
  *x = a->inputs[k];
  nodes->push_back(a->name);
  nodes->push_back(c->name);
  return true;
}

bool bypass(Graph& g, size_t i) {
  std::string in = g.nodes[i].inputs.at(0), out = g.nodes[i].outputs.at(0);
  if (g.is_graph_output(out)) {
    auto prod = g.producers();
    auto p = prod.find(in);
    if (p == prod.end() || g.use_counts()[in] != 1 || g.is_graph_output(in)) return false;
    for (auto& o : g.nodes[p->second].outputs)
      if (o == in) o = out;
    if (g.value_info.count(in)) g.value_info[out] = g.value_info[in], g.value_info[out].name = out;
  } else {
    for (auto& m : g.nodes)
      for (auto& x : m.inputs)
        if (x == out) x = in;
  }
  g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
  return true;
}

}  // namespace fixpoint::match
