// fixpoint: what the fixed-point engine runs (the capability table), and how a graph is split
// into accelerator subgraphs and CPU float subgraphs (docs/partitioning.md).
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fixpoint/ir.h"

namespace fixpoint {

// Op families of the fixed-point engine; the compiler prepares each family its own way.
extern const std::set<std::string> kMoveOps;  // data movement: codes pass through unchanged
extern const std::set<std::string> kLutOps;   // one input, elementwise: a table over every code

// A float activation: not a constant, and float (or of unknown type). Only these get codes.
bool is_float_activation(const Graph& g, const std::string& t);
// A Resize/Upsample the integer kernel interpolates linearly (34); the other mode it runs is nearest.
bool is_linear_resize(const Node& n);

// Whether the fixed-point engine runs node n of g. When it does not, `reason` says why, starting
// with the category: "unsupported op: ..." or "unsupported attribute: ...".
struct Capability {
  bool supported = false;
  std::string reason;
};
Capability accelerator_supports(const Graph& g, const Node& n);

// LIST entries of --bits16/--params16/--deny/--allow: an ONNX node name, an output tensor name,
// a glob over either, or op:TYPE.
bool layer_matches(const std::string& pattern, const Node& node);
bool layer_matches_any(const std::vector<std::string>& patterns, const Node& node);

struct PartitionOptions {
  std::vector<std::string> deny;   // forced to the CPU
  std::vector<std::string> allow;  // when non-empty: only these may run on the accelerator
};

struct Subgraph {
  int id = 0;
  std::string kind;                // "accelerator" or "cpu"
  std::vector<std::string> nodes;  // ONNX node names in topological order
};

struct Partition {
  std::map<std::string, std::string> cpu_reason;  // node name -> why it runs on the CPU
  bool on_accelerator(const std::string& node) const { return !cpu_reason.count(node); }
};

// Assigns every node: capability table, then the user's deny/allow lists, then the island rule
// (docs/partitioning.md): an accelerator group without a Conv/ConvTranspose/Gemm/MatMul, of at
// most two nodes, fed only by the CPU and read only by the CPU, moves to the CPU.
Partition partition_graph(const Graph& g, const PartitionOptions& opts);

// Maximal convex groups of nodes on the same side, in topological order: a group never needs a
// result of another group that itself needs this group (so each runs as one call). `side(i)`
// is true for accelerator nodes; `members(i)` lists the ONNX node names node i stands for.
std::vector<Subgraph> group_subgraphs(const std::vector<std::vector<std::string>>& node_inputs,
                                      const std::vector<std::vector<std::string>>& node_outputs,
                                      const std::vector<bool>& on_accelerator,
                                      const std::vector<std::vector<std::string>>& members);

// Tensors crossing between an accelerator subgraph and a CPU subgraph (each a quantize or a
// dequantize at run time).
int count_boundary_tensors(const std::vector<std::vector<std::string>>& node_inputs,
                           const std::vector<std::vector<std::string>>& node_outputs,
                           const std::vector<bool>& on_accelerator);

}  // namespace fixpoint
