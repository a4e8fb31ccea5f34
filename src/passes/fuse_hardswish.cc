// HardSwish as exported by PyTorch/Paddle: x * Clip(x + 3, 0, 6) / 6 (Div by 6 or Mul by 1/6),
// and x * HardSigmoid(x) with alpha 1/6, beta 0.5 -> HardSwish(x). One table op instead of four
// requantized steps in fixed point.
#include <algorithm>
#include <cmath>

#include "fixpoint/graph_match.h"
#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

class FuseHardSwish : public Pass {
 public:
  std::string name() const override { return "fuse_hardswish"; }

  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      std::vector<std::string> removed;
      std::string x;
      if (!match(g, g.nodes[i], &x, &removed)) continue;
      Node& last = g.nodes[i];
      std::string label = last.label();
      Node hs;
      hs.op_type = "HardSwish";
      hs.name = last.name;
      hs.opset = std::max(14, last.opset);
      hs.inputs = {x};
      hs.outputs = {last.outputs[0]};
      last = hs;
      std::string names;
      for (const auto& r : removed) names += " '" + r + "'";
      g.nodes.erase(std::remove_if(g.nodes.begin(), g.nodes.end(),
                                   [&](const Node& n) { return std::count(removed.begin(), removed.end(), n.name); }),
                    g.nodes.end());
      removed.push_back(hs.name);
      log.add(cat("fused", names, " and ", label, " into HardSwish"), removed);
      ++changed;
      i = 0;
    }
    return changed;
  }

 private:

  static bool match(const Graph& g, const Node& last, std::string* x, std::vector<std::string>* rm) {
    if (!last.domain.empty() || last.outputs.size() != 1) return false;
    // Mul(x, HardSigmoid(x; 1/6, 0.5))
    if (last.op_type == "Mul") {
      for (int k = 0; k < 2; ++k) {
        const Node* h = match::producer(g, last.inputs[k]);
        if (h && h->op_type == "HardSigmoid" && h->inputs[0] == last.inputs[1 - k] && match::inner(g, last.inputs[k]) &&
            std::abs(h->attr_float("alpha", 0.2f) - 1.0 / 6) < 1e-6 && std::abs(h->attr_float("beta", 0.5f) - 0.5) < 1e-6) {
          *x = h->inputs[0];
          rm->push_back(h->name);
          return true;
        }
      }
    }
    // Div(Mul(x, Clip(x + 3, 0, 6)), 6) or Mul(Mul(...), 1/6)
    bool div6 = last.op_type == "Div" && match::scalar_const(g, last.inputs[1], 6.0);
    bool mul6 = last.op_type == "Mul" && (match::scalar_const(g, last.inputs[1], 1.0 / 6) || match::scalar_const(g, last.inputs[0], 1.0 / 6));
    if (!div6 && !mul6) return false;
    std::string inner = div6 || match::scalar_const(g, last.inputs[1], 1.0 / 6) ? last.inputs[0] : last.inputs[1];
    const Node* m = match::producer(g, inner);
    if (!m || m->op_type != "Mul" || !match::inner(g, inner)) return false;
    for (int k = 0; k < 2; ++k) {
      std::vector<std::string> r;
      std::string xx;
      if (match::clip_of_x_plus_3(g, m->inputs[k], &xx, &r) && xx == m->inputs[1 - k]) {
        *x = xx;
        *rm = r;
        rm->push_back(m->name);
        return true;
      }
    }
    return false;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_hardswish() { return std::make_unique<FuseHardSwish>(); }

}  // namespace fixpoint
