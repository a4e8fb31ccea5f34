// Identity / Dropout removal: consumers of the node's output read its input instead. When the
// output is a graph output (whose name must survive), the producer of the input is renamed to
// write the graph output directly, if that is unambiguous; otherwise the node stays.
#include <algorithm>

#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

class IdentityElimination : public Pass {
 public:
  std::string name() const override { return "identity_elimination"; }
  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size();) {
      const Node& n = g.nodes[i];
      bool removable = n.domain.empty() && (n.op_type == "Identity" || n.op_type == "Dropout") &&
                       !n.inputs.empty() && !n.inputs[0].empty() && !n.outputs.empty() &&
                       (n.outputs.size() == 1 || std::all_of(n.outputs.begin() + 1, n.outputs.end(),
                                                             [&](const std::string& o) { return o.empty() || !g.use_counts().count(o); }));
      if (n.op_type == "Dropout" && n.opset >= 12 && n.inputs.size() > 2 && !n.inputs[2].empty()) {
        // training_mode given as an input: only fold when it is a known false constant.
        auto it = g.initializers.find(n.inputs[2]);
        removable = removable && it != g.initializers.end() && it->second.numel() == 1 && it->second.get_f64(0) == 0;
      }
      if (!removable) { ++i; continue; }
      std::string in = n.inputs[0], out = n.outputs[0];
      if (g.is_graph_output(out)) {
        // Keep names of graph outputs: rename the producer's output if it is not used elsewhere.
        auto prod = g.producers();
        auto uses = g.use_counts();
        auto p = prod.find(in);
        if (p == prod.end() || uses[in] != 1 || g.is_graph_output(in)) { ++i; continue; }
        for (auto& o : g.nodes[p->second].outputs)
          if (o == in) o = out;
        if (g.value_info.count(in)) g.value_info[out] = g.value_info[in], g.value_info[out].name = out;
      } else {
        for (auto& m : g.nodes)
          for (auto& x : m.inputs)
            if (x == out) x = in;
      }
      log.add(cat("removed ", n.label()));
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
      ++changed;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_identity_elimination() { return std::make_unique<IdentityElimination>(); }

}  // namespace fixpoint
