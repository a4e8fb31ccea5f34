// Dead node elimination: a node none of whose outputs is read (by a node or as a graph output)
// is removed, repeatedly from the end; then initializers nobody reads are dropped.
#include <algorithm>

#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

class DeadNodeElimination : public Pass {
 public:
  std::string name() const override { return "dead_node_elimination"; }
  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    std::map<std::string, int> uses = g.use_counts();
    for (size_t k = g.nodes.size(); k-- > 0;) {
      const Node& n = g.nodes[k];
      bool live = std::any_of(n.outputs.begin(), n.outputs.end(),
                              [&](const std::string& o) { return !o.empty() && uses[o] > 0; });
      if (live) continue;
      for (const auto& in : n.inputs)
        if (!in.empty()) --uses[in];
      log.add(cat("removed ", n.label()), {n.name});
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(k));
      ++changed;
    }
    for (auto it = g.initializers.begin(); it != g.initializers.end();) {
      if (uses[it->first] <= 0) it = g.initializers.erase(it);
      else ++it;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_dead_node_elimination() { return std::make_unique<DeadNodeElimination>(); }

}  // namespace fixpoint
