// GELU as exported before opset 20 (PyTorch nn.GELU, Paddle gelu):
//   y = x * 0.5 * (1 + Erf(x / sqrt 2))
// with the 1/sqrt 2 as Div or Mul (div_by_constant turns one into the other) and the 0.5 applied
// to x, to the bracket, or to the product. -> Gelu(x) (approximate "none"): one table in fixed
// point instead of an Erf table and three requantized products.
#include <algorithm>
#include <cmath>

#include "fixpoint/graph_match.h"
#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

class FuseGelu : public Pass {
 public:
  std::string name() const override { return "fuse_gelu"; }
  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      std::string x;
      std::vector<std::string> removed;
      const Node* last = nullptr;
      if (!match_at_erf(g, g.nodes[i], &x, &last, &removed)) continue;
      Node gelu = *last;
      gelu.op_type = "Gelu";
      gelu.opset = std::max(20, gelu.opset);
      gelu.inputs = {x};
      gelu.attrs.clear();
      std::string label = last->label();
      std::string keep = gelu.name;
      for (auto& n : g.nodes)
        if (n.name == keep) n = gelu;
      g.nodes.erase(std::remove_if(g.nodes.begin(), g.nodes.end(),
                                   [&](const Node& n) { return n.name != keep && std::count(removed.begin(), removed.end(), n.name); }),
                    g.nodes.end());
      log.add(cat("fused ", removed.size(), " nodes ending at ", label, " into Gelu"), removed);
      ++changed;
      i = 0;
    }
    return changed;
  }

 private:
  // Index of the operand of binary `n` that is the scalar constant v, or -1.
  static int const_operand(const Graph& g, const Node& n, double v) {
    if (n.inputs.size() != 2) return -1;
    if (match::scalar_const(g, n.inputs[1], v)) return 1;
    if (match::scalar_const(g, n.inputs[0], v)) return 0;
    return -1;
  }
  static const Node* only_reader(const Graph& g, const std::string& t, const char* op) {
    if (!match::inner(g, t)) return nullptr;
    const Node* n = match::single_consumer(g, t);
    return n && n->op_type == op && n->domain.empty() ? n : nullptr;
  }

  static bool match_at_erf(const Graph& g, const Node& erf, std::string* x, const Node** last, std::vector<std::string>* rm) {
    if (erf.op_type != "Erf" || !erf.domain.empty()) return false;
    // u = x / sqrt 2 or x * (1 / sqrt 2)
    const Node* u = match::producer(g, erf.inputs[0]);
    if (!u || !match::inner(g, erf.inputs[0])) return false;
    int k = u->op_type == "Div" ? (match::scalar_const(g, u->inputs[1], M_SQRT2) ? 1 : -1)
            : u->op_type == "Mul" ? const_operand(g, *u, M_SQRT1_2) : -1;
    if (k < 0) return false;
    *x = u->inputs[1 - k];
    const Node* add = only_reader(g, erf.outputs[0], "Add");
    if (!add || const_operand(g, *add, 1.0) < 0) return false;
    *rm = {u->name, erf.name, add->name};
    const Node* m1 = only_reader(g, add->outputs[0], "Mul");
    if (!m1 || m1->inputs.size() != 2) return false;
    std::string other = m1->inputs[0] == add->outputs[0] ? m1->inputs[1] : m1->inputs[0];
    rm->push_back(m1->name);
    if (other == *x) {  // (x * bracket) * 0.5
      const Node* m2 = only_reader(g, m1->outputs[0], "Mul");
      if (!m2 || const_operand(g, *m2, 0.5) < 0) return false;
      rm->push_back(m2->name);
      *last = m2;
      return true;
    }
    if (const_operand(g, *m1, 0.5) >= 0) {  // x * (bracket * 0.5)
      const Node* m2 = only_reader(g, m1->outputs[0], "Mul");
      if (!m2 || std::find(m2->inputs.begin(), m2->inputs.end(), *x) == m2->inputs.end()) return false;
      rm->push_back(m2->name);
      *last = m2;
      return true;
    }
    const Node* half = match::producer(g, other);  // (x * 0.5) * bracket
    if (!half || half->op_type != "Mul" || !match::inner(g, other)) return false;
    int h = const_operand(g, *half, 0.5);
    if (h < 0 || half->inputs[1 - h] != *x) return false;
    rm->push_back(half->name);
    *last = m1;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_gelu() { return std::make_unique<FuseGelu>(); }

}  // namespace fixpoint
