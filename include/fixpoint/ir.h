// fixpoint: graph IR. Tensors with dtype and (possibly symbolic) shape, nodes with typed
// attributes, initializers, topological order, a validator and a readable text dump.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "fixpoint/tensor.h"

namespace fixpoint {

// A dimension: a known size, or a symbol (e.g. "batch") or nothing until bound.
struct Dim {
  int64_t value = -1;  // >= 0 when known
  std::string symbol;  // name of a symbolic dim, may be empty
  bool known() const { return value >= 0; }
  static Dim of(int64_t v) { return Dim{v, {}}; }
  static Dim sym(std::string s) { return Dim{-1, std::move(s)}; }
};

struct ValueInfo {
  std::string name;
  DType dtype = DType::Undefined;
  std::optional<std::vector<Dim>> shape;  // nullopt: rank unknown
  bool shape_known() const;               // rank known and every dim known
  Shape static_shape() const;             // requires shape_known()
  std::string shape_text() const;         // "1x3xbatchx?"
};

struct Attribute {
  enum class Kind { Float, Int, String, Tensor, Floats, Ints, Strings, Graph };
  Kind kind = Kind::Int;
  float f = 0;
  int64_t i = 0;
  std::string s;
  fixpoint::Tensor t;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::string text() const;
  static Attribute of_float(float v) { Attribute a; a.kind = Kind::Float; a.f = v; return a; }
  static Attribute of_int(int64_t v) { Attribute a; a.kind = Kind::Int; a.i = v; return a; }
  static Attribute of_ints(std::vector<int64_t> v) { Attribute a; a.kind = Kind::Ints; a.ints = std::move(v); return a; }
  static Attribute of_string(std::string v) { Attribute a; a.kind = Kind::String; a.s = std::move(v); return a; }
};

struct Node {
  std::string name;      // ONNX node name (importer invents one if empty)
  std::string op_type;
  std::string domain;    // "" for the default ONNX domain
  int opset = 0;         // opset version of the node's domain in the model
  std::vector<std::string> inputs;   // "" = optional input omitted
  std::vector<std::string> outputs;  // "" = optional output omitted
  std::map<std::string, Attribute> attrs;

  bool has_attr(const std::string& a) const { return attrs.count(a) != 0; }
  int64_t attr_int(const std::string& a, int64_t dflt) const;
  float attr_float(const std::string& a, float dflt) const;
  std::string attr_string(const std::string& a, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& a, std::vector<int64_t> dflt = {}) const;
  std::vector<float> attr_floats(const std::string& a, std::vector<float> dflt = {}) const;
  const Attribute* find_attr(const std::string& a) const;
  // "Conv 'conv1'" for error messages.
  std::string label() const;
};

class Graph {
 public:
  std::string name;
  std::vector<ValueInfo> inputs;    // graph inputs that are not initializers
  std::vector<ValueInfo> outputs;
  std::vector<Node> nodes;
  std::map<std::string, Tensor> initializers;
  std::map<std::string, ValueInfo> value_info;  // inferred dtype/shape of intermediate tensors
  std::map<std::string, int> opsets;            // domain -> version

  // Reorders nodes topologically (stable: keeps the file order where it can).
  // Throws naming a node on a cycle or on an input that nothing produces.
  void topological_sort();
  // Checks structural invariants; throws Error naming the problem.
  void validate() const;
  // Readable text, one line per input/initializer/node/output; stable for tests.
  std::string dump() const;

  // Known dtype/shape of a tensor (input, initializer, value_info, output) or nullptr.
  const ValueInfo* info(const std::string& tensor) const;
  // Map tensor name -> index of producing node (graph inputs/initializers absent).
  std::map<std::string, size_t> producers() const;
  // Map tensor name -> number of node inputs + graph outputs reading it.
  std::map<std::string, int> use_counts() const;
  bool is_graph_output(const std::string& t) const;
  int64_t parameter_count() const;  // elements in floating-point initializers

 private:
  mutable std::map<std::string, ValueInfo> info_cache_;
};

}  // namespace fixpoint
