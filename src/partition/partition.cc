// Partitioning (docs/partitioning.md §3): capability table, user lists, the island rule, and
// convex grouping into subgraphs.
#include <algorithm>

#include "fixpoint/partition.h"

namespace fixpoint {
namespace {

bool is_mac_op(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
}

struct NodeLists {
  std::vector<std::vector<std::string>> inputs, outputs, members;
};
// Index of the node writing each tensor.
std::map<std::string, size_t> producers_of(const std::vector<std::vector<std::string>>& node_outputs) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < node_outputs.size(); ++i)
    for (const auto& o : node_outputs[i])
      if (!o.empty()) producer[o] = i;
  return producer;
}

NodeLists lists_of(const Graph& g) {
  NodeLists l;
  for (const auto& n : g.nodes) {
    l.inputs.push_back(n.inputs);
    l.outputs.push_back(n.outputs);
    l.members.push_back({n.name});
  }
  return l;
}

}  // namespace

std::vector<Subgraph> group_subgraphs(const std::vector<std::vector<std::string>>& node_inputs,
                                      const std::vector<std::vector<std::string>>& node_outputs,
                                      const std::vector<bool>& on_accelerator,
                                      const std::vector<std::vector<std::string>>& members) {
  std::map<std::string, size_t> producer = producers_of(node_outputs);
  std::vector<int> group_of(node_inputs.size(), -1);
  std::vector<Subgraph> groups;
  std::vector<std::set<int>> ancestors;  // transitively closed: groups that must run before
  for (size_t i = 0; i < node_inputs.size(); ++i) {
    std::set<int> preds;
    for (const auto& in : node_inputs[i]) {
      auto p = producer.find(in);
      if (p != producer.end() && p->second < i) preds.insert(group_of[p->second]);
    }
    std::string kind = on_accelerator[i] ? "accelerator" : "cpu";
    // Joining group G keeps every group convex unless G runs before another predecessor group H
    // (G -> H -> this node -> G would be a cycle). Prefer a predecessor group, then the latest.
    auto valid = [&](int G) {
      if (groups[G].kind != kind) return false;
      for (int H : preds)
        if (H != G && ancestors[H].count(G)) return false;
      return true;
    };
    int chosen = -1;
    for (int G : preds)
      if (valid(G) && G > chosen) chosen = G;
    for (int G = static_cast<int>(groups.size()) - 1; chosen < 0 && G >= 0; --G)
      if (valid(G)) chosen = G;
    if (chosen < 0) {
      chosen = static_cast<int>(groups.size());
      groups.push_back(Subgraph{chosen, kind, {}});
      ancestors.emplace_back();
    }
    group_of[i] = chosen;
    for (const auto& m : members[i]) groups[chosen].nodes.push_back(m);
    std::set<int> added;
    for (int H : preds)
      if (H != chosen) {
        added.insert(H);
        added.insert(ancestors[H].begin(), ancestors[H].end());
      }
    if (added.empty()) continue;
    for (size_t K = 0; K < groups.size(); ++K)
      if (static_cast<int>(K) == chosen || ancestors[K].count(chosen)) ancestors[K].insert(added.begin(), added.end());
  }
  return groups;
}

int count_boundary_tensors(const std::vector<std::vector<std::string>>& node_inputs,
                           const std::vector<std::vector<std::string>>& node_outputs,
                           const std::vector<bool>& on_accelerator) {
  std::map<std::string, size_t> producer = producers_of(node_outputs);
  std::set<std::string> crossing;
  for (size_t i = 0; i < node_inputs.size(); ++i)
    for (const auto& in : node_inputs[i]) {
      auto p = producer.find(in);
      if (p != producer.end() && on_accelerator[p->second] != on_accelerator[i]) crossing.insert(in);
    }
  return static_cast<int>(crossing.size());
}

Partition partition_graph(const Graph& g, const PartitionOptions& opts) {
  Partition part;
  for (const auto& n : g.nodes) {
    if (layer_matches_any(opts.deny, n)) {
      part.cpu_reason[n.name] = "denied by user (--deny)";
      continue;
    }
    if (!opts.allow.empty() && !layer_matches_any(opts.allow, n)) {
      part.cpu_reason[n.name] = "denied by user (not in --allow)";
      continue;
    }
    Capability c = accelerator_supports(g, n);
    if (!c.supported) part.cpu_reason[n.name] = c.reason;
  }
  // Island rule: a small accelerator group with no multiply-accumulate op, fed only by CPU nodes
  // and read only by CPU nodes, costs a quantize per input and a dequantize per output and saves
  // nothing: it runs on the CPU.
  NodeLists l = lists_of(g);
  std::vector<bool> acc(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) acc[i] = part.on_accelerator(g.nodes[i].name);
  std::map<std::string, size_t> index, producer = producers_of(l.outputs);
  for (size_t i = 0; i < g.nodes.size(); ++i) index[g.nodes[i].name] = i;
  for (const auto& sg : group_subgraphs(l.inputs, l.outputs, acc, l.members)) {
    if (sg.kind != "accelerator" || sg.nodes.size() > 2) continue;
    std::set<std::string> inside(sg.nodes.begin(), sg.nodes.end());
    bool island = true;
    for (const auto& name : sg.nodes) {
      const Node& n = g.nodes[index[name]];
      island = island && !is_mac_op(n.op_type);
      for (const auto& in : n.inputs) {
        if (in.empty() || g.initializers.count(in)) continue;
        auto p = producer.find(in);
        if (p == producer.end()) island = false;  // a graph input: quantized on the way in anyway
        else if (!inside.count(g.nodes[p->second].name) && acc[p->second]) island = false;
      }
      for (const auto& o : n.outputs) {
        if (o.empty()) continue;
        if (g.is_graph_output(o)) island = false;
        for (size_t k = 0; k < g.nodes.size(); ++k)
          if (acc[k] && !inside.count(g.nodes[k].name) &&
              std::find(g.nodes[k].inputs.begin(), g.nodes[k].inputs.end(), o) != g.nodes[k].inputs.end())
            island = false;
      }
    }
    if (!island) continue;
    for (const auto& name : sg.nodes)
      part.cpu_reason[name] = cat("small accelerator island (", sg.nodes.size(),
                                  " node(s) between CPU nodes, no Conv/MatMul): conversions would cost more than it saves");
  }
  return part;
}

}  // namespace fixpoint
