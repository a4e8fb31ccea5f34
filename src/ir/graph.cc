#include <algorithm>
#include <set>
#include <sstream>

#include "fixpoint/ir.h"

namespace fixpoint {

bool ValueInfo::shape_known() const {
  if (!shape) return false;
  return std::all_of(shape->begin(), shape->end(), [](const Dim& d) { return d.known(); });
}

Shape ValueInfo::static_shape() const {
  FP_CHECK(shape_known(), "tensor '", name, "' has no static shape (", shape_text(), ")");
  Shape s;
  for (const Dim& d : *shape) s.push_back(d.value);
  return s;
}

std::string ValueInfo::shape_text() const {
  if (!shape) return "?";
  if (shape->empty()) return "scalar";
  std::string r;
  for (size_t i = 0; i < shape->size(); ++i) {
    const Dim& d = (*shape)[i];
    r += i ? "x" : "";
    r += d.known() ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol);
  }
  return r;
}

std::string Attribute::text() const {
  std::ostringstream os;
  auto list = [&os](const auto& v) {
    os << "[";
    for (size_t k = 0; k < v.size(); ++k) os << (k ? "," : "") << v[k];
    os << "]";
  };
  switch (kind) {
    case Kind::Float: os << f; break;
    case Kind::Int: os << i; break;
    case Kind::String: os << '"' << s << '"'; break;
    case Kind::Tensor: os << "tensor<" << dtype_name(t.dtype()) << "," << shape_str(t.shape()) << ">"; break;
    case Kind::Floats: list(floats); break;
    case Kind::Ints: list(ints); break;
    case Kind::Strings: list(strings); break;
    case Kind::Graph: os << "graph"; break;
  }
  return os.str();
}

const Attribute* Node::find_attr(const std::string& a) const {
  auto it = attrs.find(a);
  return it == attrs.end() ? nullptr : &it->second;
}

int64_t Node::attr_int(const std::string& a, int64_t dflt) const {
  const Attribute* at = find_attr(a);
  if (!at) return dflt;
  FP_CHECK(at->kind == Attribute::Kind::Int, label(), ": attribute '", a, "' must be an int");
  return at->i;
}

float Node::attr_float(const std::string& a, float dflt) const {
  const Attribute* at = find_attr(a);
  if (!at) return dflt;
  if (at->kind == Attribute::Kind::Int) return static_cast<float>(at->i);
  FP_CHECK(at->kind == Attribute::Kind::Float, label(), ": attribute '", a, "' must be a float");
  return at->f;
}

std::string Node::attr_string(const std::string& a, const std::string& dflt) const {
  const Attribute* at = find_attr(a);
  if (!at) return dflt;
  FP_CHECK(at->kind == Attribute::Kind::String, label(), ": attribute '", a, "' must be a string");
  return at->s;
}

std::vector<int64_t> Node::attr_ints(const std::string& a, std::vector<int64_t> dflt) const {
  const Attribute* at = find_attr(a);
  if (!at) return dflt;
  if (at->kind == Attribute::Kind::Int) return {at->i};
  FP_CHECK(at->kind == Attribute::Kind::Ints, label(), ": attribute '", a, "' must be a list of ints");
  return at->ints;
}

std::vector<float> Node::attr_floats(const std::string& a, std::vector<float> dflt) const {
  const Attribute* at = find_attr(a);
  if (!at) return dflt;
  if (at->kind == Attribute::Kind::Float) return {at->f};
  FP_CHECK(at->kind == Attribute::Kind::Floats, label(), ": attribute '", a, "' must be a list of floats");
  return at->floats;
}

std::string Node::label() const { return cat("node '", name, "' (", op_type, ")"); }

void Graph::topological_sort() {
  std::set<std::string> available;
  for (const auto& in : inputs) available.insert(in.name);
  for (const auto& [n, t] : initializers) available.insert(n);
  available.insert("");
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& o : nodes[i].outputs)
      if (!o.empty()) {
        FP_CHECK(!producer.count(o) && !available.count(o), "tensor '", o, "' is produced twice (second time by ",
                 nodes[i].label(), ")");
        producer[o] = i;
      }
  // Kahn's algorithm, always taking the lowest-index ready node to keep file order.
  std::vector<int> missing(nodes.size(), 0);
  std::map<std::string, std::vector<size_t>> consumers;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::set<std::string> seen;
    for (const auto& in : nodes[i].inputs) {
      if (available.count(in) || !seen.insert(in).second) continue;
      FP_CHECK(producer.count(in), nodes[i].label(), " reads tensor '", in,
               "' that no node, input or initializer provides");
      ++missing[i];
      consumers[in].push_back(i);
    }
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (missing[i] == 0) ready.insert(i);
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  std::vector<bool> done(nodes.size(), false);
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    done[i] = true;
    sorted.push_back(nodes[i]);
    for (const auto& o : nodes[i].outputs)
      for (size_t c : consumers[o])
        if (--missing[c] == 0) ready.insert(c);
  }
  if (sorted.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (!done[i]) fail("graph has a cycle through ", nodes[i].label());
  }
  nodes = std::move(sorted);
}

void Graph::validate() const {
  std::set<std::string> defined;
  for (const auto& in : inputs) {
    FP_CHECK(!in.name.empty(), "graph input with an empty name");
    FP_CHECK(defined.insert(in.name).second, "graph input '", in.name, "' is declared twice");
  }
  for (const auto& [n, t] : initializers) defined.insert(n);
  std::set<std::string> names;
  for (const auto& node : nodes) {
    FP_CHECK(!node.op_type.empty(), "node '", node.name, "' has no op_type");
    FP_CHECK(names.insert(node.name).second, "two nodes are named '", node.name, "'");
    for (const auto& in : node.inputs)
      FP_CHECK(in.empty() || defined.count(in), node.label(), " reads tensor '", in,
               "' before it is produced (graph not in topological order, or a cycle)");
    for (const auto& o : node.outputs)
      FP_CHECK(o.empty() || defined.insert(o).second, node.label(), " writes tensor '", o,
               "' that already exists");
  }
  for (const auto& out : outputs) FP_CHECK(defined.count(out.name), "graph output '", out.name, "' is never produced");
}

std::string Graph::dump() const {
  std::ostringstream os;
  auto vi = [](const ValueInfo& v) { return cat(v.name, ": ", dtype_name(v.dtype), "[", v.shape_text(), "]"); };
  for (const auto& in : inputs) os << "input " << vi(in) << "\n";
  for (const auto& [n, t] : initializers)
    os << "initializer " << n << ": " << dtype_name(t.dtype()) << "[" << shape_str(t.shape()) << "]\n";
  for (const auto& node : nodes) {
    os << "node " << node.name << " = " << node.op_type << "(";
    for (size_t i = 0; i < node.inputs.size(); ++i) os << (i ? ", " : "") << node.inputs[i];
    os << ") -> (";
    for (size_t i = 0; i < node.outputs.size(); ++i) os << (i ? ", " : "") << node.outputs[i];
    os << ")";
    for (const auto& [k, a] : node.attrs) os << " " << k << "=" << a.text();
    os << "\n";
  }
  for (const auto& out : outputs) os << "output " << vi(out) << "\n";
  return os.str();
}

const ValueInfo* Graph::info(const std::string& tensor) const {
  for (const auto& v : inputs)
    if (v.name == tensor) return &v;
  for (const auto& v : outputs)
    if (v.name == tensor && (v.shape || v.dtype != DType::Undefined)) {
      auto it = value_info.find(tensor);
      if (it == value_info.end() || !it->second.shape) return &v;
    }
  auto it = value_info.find(tensor);
  if (it != value_info.end()) return &it->second;
  auto init = initializers.find(tensor);
  if (init != initializers.end()) {
    ValueInfo v{tensor, init->second.dtype(), std::vector<Dim>{}};
    for (int64_t d : init->second.shape()) v.shape->push_back(Dim::of(d));
    return &(info_cache_[tensor] = v);
  }
  for (const auto& v : outputs)
    if (v.name == tensor) return &v;
  return nullptr;
}

std::map<std::string, size_t> Graph::producers() const {
  std::map<std::string, size_t> p;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& o : nodes[i].outputs)
      if (!o.empty()) p[o] = i;
  return p;
}

std::map<std::string, int> Graph::use_counts() const {
  std::map<std::string, int> u;
  for (const auto& n : nodes)
    for (const auto& in : n.inputs)
      if (!in.empty()) ++u[in];
  for (const auto& o : outputs) ++u[o.name];
  return u;
}

bool Graph::is_graph_output(const std::string& t) const {
  return std::any_of(outputs.begin(), outputs.end(), [&](const ValueInfo& v) { return v.name == t; });
}

int64_t Graph::parameter_count() const {
  int64_t n = 0;
  for (const auto& [name, t] : initializers)
    if (dtype_is_float(t.dtype())) n += t.numel();
  return n;
}

}  // namespace fixpoint
