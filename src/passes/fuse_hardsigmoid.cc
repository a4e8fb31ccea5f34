// Clip(x + 3, 0, 6) / 6 (or * 1/6) on its own, as PyTorch exports nn.Hardsigmoid at old opsets
// -> HardSigmoid(x; alpha 1/6, beta 1/2). When the result multiplies x, fuse_hardswish takes
// the whole pattern instead; this pass only fires when nothing bigger matches.
#include <algorithm>

#include "fixpoint/graph_match.h"
#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

class FuseHardSigmoid : public Pass {
 public:
  std::string name() const override { return "fuse_hardsigmoid"; }
  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& last = g.nodes[i];
      if (!last.domain.empty() || last.inputs.size() != 2) continue;
      bool div6 = last.op_type == "Div" && match::scalar_const(g, last.inputs[1], 6.0);
      int k = last.op_type != "Mul" ? -1 : match::scalar_const(g, last.inputs[1], 1.0 / 6) ? 0
                                          : match::scalar_const(g, last.inputs[0], 1.0 / 6) ? 1 : -1;
      if (!div6 && k < 0) continue;
      std::string clip_out = div6 ? last.inputs[0] : last.inputs[k];
      // Leave x * Clip(x + 3, 0, 6) / 6 to fuse_hardswish: the Clip output must feed this node directly.
      std::string x;
      std::vector<std::string> removed;
      if (!match::clip_of_x_plus_3(g, clip_out, &x, &removed)) continue;
      Node hs = last;
      hs.op_type = "HardSigmoid";
      hs.inputs = {x};
      hs.attrs.clear();
      hs.attrs["alpha"] = Attribute::of_float(1.0f / 6);
      hs.attrs["beta"] = Attribute::of_float(0.5f);
      std::string label = last.label();
      g.nodes[i] = hs;
      removed.push_back(hs.name);
      g.nodes.erase(std::remove_if(g.nodes.begin(), g.nodes.end(),
                                   [&](const Node& n) { return n.name != hs.name && std::count(removed.begin(), removed.end(), n.name); }),
                    g.nodes.end());
      log.add(cat("fused Add+Clip and ", label, " into HardSigmoid"), removed);
      ++changed;
      i = 0;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_hardsigmoid() { return std::make_unique<FuseHardSigmoid>(); }

}  // namespace fixpoint
