// Identity / Dropout removal: consumers of the node's output read its input instead. When the
// output is a graph output (whose name must survive), the producer of the input is renamed to
// write the graph output directly, if that is unambiguous; otherwise the node stays.
#include <algorithm>

#include "fixpoint/graph_match.h"
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
        // training_mode given as an input: fold when it is a known false constant, or when the
        // ratio is a known 0 (then training mode also gives output = data).
        auto scalar_is_zero = [&](const std::string& t) {
          const Tensor* c = t.empty() ? nullptr : match::constant(g, t);
          return c && c->numel() == 1 && c->get_f64(0) == 0;
        };
        removable = removable && (scalar_is_zero(n.inputs[2]) || (n.inputs.size() > 1 && scalar_is_zero(n.inputs[1])));
      }
      if (!removable) { ++i; continue; }
      std::string label = n.label(), name = n.name;
      if (!match::bypass(g, i)) { ++i; continue; }
      log.add(cat("removed ", label), {name});
      ++changed;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_identity_elimination() { return std::make_unique<IdentityElimination>(); }

}  // namespace fixpoint
