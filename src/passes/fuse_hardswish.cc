// HardSwish as exported by PyTorch/Paddle: x * Clip(x + 3, 0, 6) / 6 (Div by 6 or Mul by 1/6),
// and x * HardSigmoid(x) with alpha 1/6, beta 0.5 -> HardSwish(x). One table op instead of four
// requantized steps in fixed point.
#include <algorithm>
#include <cmath>

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
      log.add(cat("fused", names, " and ", label, " into HardSwish"));
      ++changed;
      i = 0;
    }
    return changed;
  }

 private:
  static bool scalar_const(const Graph& g, const std::string& t, double v) {
    auto it = g.initializers.find(t);
    return it != g.initializers.end() && it->second.numel() == 1 && dtype_is_float(it->second.dtype()) &&
           std::abs(it->second.get_f64(0) - v) <= 1e-6 * std::max(1.0, std::abs(v));
  }
  static const Node* producer(const Graph& g, const std::string& t) {
    for (const auto& n : g.nodes)
      for (const auto& o : n.outputs)
        if (o == t) return &n;
    return nullptr;
  }
  static bool single_use(const Graph& g, const std::string& t) { return g.use_counts()[t] == 1 && !g.is_graph_output(t); }

  // Is t = HardSigmoid-like(x)? Clip(Add(x, 3), 0, 6) (then scaled by 1/6 outside) or
  // HardSigmoid(x, 1/6, 0.5).
  static bool clip_of_x_plus_3(const Graph& g, const std::string& t, std::string* x, std::vector<std::string>* rm) {
    const Node* c = producer(g, t);
    if (!c || c->op_type != "Clip" || !single_use(g, t)) return false;
    if (c->opset < 11) {  // bounds as attributes
      if (!c->has_attr("min") || !c->has_attr("max") || c->attr_float("min", 1) != 0.0f || c->attr_float("max", 0) != 6.0f)
        return false;
    } else if (c->inputs.size() < 3 || !scalar_const(g, c->inputs[1], 0.0) || !scalar_const(g, c->inputs[2], 6.0)) {
      return false;
    }
    const Node* a = producer(g, c->inputs[0]);
    if (!a || a->op_type != "Add" || !single_use(g, c->inputs[0])) return false;
    int k = scalar_const(g, a->inputs[1], 3.0) ? 0 : scalar_const(g, a->inputs[0], 3.0) ? 1 : -1;
    if (k < 0) return false;
    *x = a->inputs[k];
    rm->push_back(a->name);
    rm->push_back(c->name);
    return true;
  }

  static bool match(const Graph& g, const Node& last, std::string* x, std::vector<std::string>* rm) {
    if (!last.domain.empty() || last.outputs.size() != 1) return false;
    // Mul(x, HardSigmoid(x; 1/6, 0.5))
    if (last.op_type == "Mul") {
      for (int k = 0; k < 2; ++k) {
        const Node* h = producer(g, last.inputs[k]);
        if (h && h->op_type == "HardSigmoid" && h->inputs[0] == last.inputs[1 - k] && single_use(g, last.inputs[k]) &&
            std::abs(h->attr_float("alpha", 0.2f) - 1.0 / 6) < 1e-6 && std::abs(h->attr_float("beta", 0.5f) - 0.5) < 1e-6) {
          *x = h->inputs[0];
          rm->push_back(h->name);
          return true;
        }
      }
    }
    // Div(Mul(x, Clip(x + 3, 0, 6)), 6) or Mul(Mul(...), 1/6)
    bool div6 = last.op_type == "Div" && scalar_const(g, last.inputs[1], 6.0);
    bool mul6 = last.op_type == "Mul" && (scalar_const(g, last.inputs[1], 1.0 / 6) || scalar_const(g, last.inputs[0], 1.0 / 6));
    if (!div6 && !mul6) return false;
    std::string inner = div6 || scalar_const(g, last.inputs[1], 1.0 / 6) ? last.inputs[0] : last.inputs[1];
    const Node* m = producer(g, inner);
    if (!m || m->op_type != "Mul" || !single_use(g, inner)) return false;
    for (int k = 0; k < 2; ++k) {
      std::vector<std::string> r;
      std::string xx;
      if (clip_of_x_plus_3(g, m->inputs[k], &xx, &r) && xx == m->inputs[1 - k]) {
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
