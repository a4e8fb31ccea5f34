// LayerNormalization as exported op by op (PaddleOCR's recognizer, older PyTorch exports):
//   m = ReduceMean(x, axes=[-1]); d = x - m; v = ReduceMean(Pow(d, 2), axes=[-1]);
//   y = d / Sqrt(v + eps) * gamma + beta
// -> LayerNormalization(x, gamma, beta; axis=-1, epsilon=eps). In fixed point the nine steps
// would each be requantized; as one op the statistics are computed once, exactly.
#include <algorithm>
#include <cmath>

#include "fixpoint/graph_match.h"
#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

class FuseLayerNorm : public Pass {
 public:
  std::string name() const override { return "fuse_layernorm"; }

  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Match m;
      if (!match(g, g.nodes[i], &m)) continue;
      Node ln;
      ln.op_type = "LayerNormalization";
      ln.name = g.nodes[i].name;
      ln.opset = std::max(17, g.nodes[i].opset);
      ln.inputs = {m.x, m.gamma, m.beta};
      ln.outputs = {g.nodes[i].outputs[0]};
      Attribute axis, eps;
      axis.kind = Attribute::Kind::Int;
      axis.i = -1;
      eps.kind = Attribute::Kind::Float;
      eps.f = m.eps;
      ln.attrs = {{"axis", axis}, {"epsilon", eps}};
      g.nodes[i] = ln;
      g.nodes.erase(std::remove_if(g.nodes.begin(), g.nodes.end(),
                                   [&](const Node& n) { return std::count(m.removed.begin(), m.removed.end(), n.name); }),
                    g.nodes.end());
      m.removed.push_back(ln.name);
      log.add(cat("fused ", m.removed.size(), " nodes ending at '", ln.name, "' into LayerNormalization"), m.removed);
      ++changed;
      i = 0;
    }
    return changed;
  }

 private:
  struct Match {
    std::string x, gamma, beta;
    float eps = 0;
    std::vector<std::string> removed;
  };

  // ReduceMean over the last axis only, keepdims.
  static bool mean_last(const Graph& g, const Node* n) {
    if (!n || n->op_type != "ReduceMean" || n->attr_int("keepdims", 1) != 1) return false;
    std::vector<int64_t> axes = n->attr_ints("axes");
    if (axes.empty() && n->inputs.size() > 1)
      if (const Tensor* t = match::constant(g, n->inputs[1])) axes = t->to_i64_vector();
    const ValueInfo* vi = g.info(n->inputs[0]);
    int64_t rank = vi && vi->shape ? static_cast<int64_t>(vi->shape->size()) : -1;
    return axes.size() == 1 && (axes[0] == -1 || (rank > 0 && axes[0] == rank - 1));
  }
  // The operand of binary node n that is not `other`, and which index it is.
  static int other_input(const Node& n, const std::string& other) {
    if (n.inputs.size() != 2) return -1;
    if (n.inputs[0] == other) return 1;
    if (n.inputs[1] == other) return 0;
    return -1;
  }

  static bool match(const Graph& g, const Node& add_beta, Match* m) {
    if (add_beta.op_type != "Add" || !add_beta.domain.empty()) return false;
    for (int k = 0; k < 2; ++k) {
      const Tensor* beta = match::constant(g, add_beta.inputs[1 - k]);
      const Node* mul = match::producer(g, add_beta.inputs[k]);
      if (!beta || !mul || mul->op_type != "Mul" || !match::inner(g, add_beta.inputs[k], 1)) continue;
      for (int j = 0; j < 2; ++j) {
        const Tensor* gamma = match::constant(g, mul->inputs[1 - j]);
        const Node* div = match::producer(g, mul->inputs[j]);
        if (!gamma || !div || div->op_type != "Div" || !match::inner(g, mul->inputs[j], 1)) continue;
        const Node* sub = match::producer(g, div->inputs[0]);
        const Node* sqrt = match::producer(g, div->inputs[1]);
        if (!sub || sub->op_type != "Sub" || !sqrt || sqrt->op_type != "Sqrt") continue;
        if (!match::inner(g, div->inputs[1], 1)) continue;
        const Node* mean = match::producer(g, sub->inputs[1]);
        if (!mean_last(g, mean) || mean->inputs[0] != sub->inputs[0] || !match::inner(g, sub->inputs[1], 1)) continue;
        const Node* add_eps = match::producer(g, sqrt->inputs[0]);
        if (!add_eps || add_eps->op_type != "Add" || !match::inner(g, sqrt->inputs[0], 1)) continue;
        int e = -1;
        for (int q = 0; q < 2; ++q)
          if (const Tensor* t = match::constant(g, add_eps->inputs[q]); t && t->numel() == 1) e = q;
        if (e < 0) continue;
        const Node* var = match::producer(g, add_eps->inputs[1 - e]);
        if (!mean_last(g, var) || !match::inner(g, add_eps->inputs[1 - e], 1)) continue;
        const Node* pow = match::producer(g, var->inputs[0]);
        if (!pow || !match::inner(g, var->inputs[0], 1)) continue;
        bool square = false;
        if (pow->op_type == "Pow" && pow->inputs[0] == div->inputs[0])
          if (const Tensor* p = match::constant(g, pow->inputs[1]); p && p->numel() == 1 && p->get_f64(0) == 2.0) square = true;
        if (pow->op_type == "Mul" && pow->inputs[0] == div->inputs[0] && pow->inputs[1] == div->inputs[0]) square = true;
        // d = x - mean feeds the Div and the square: Pow(d, 2) reads it once, Mul(d, d) twice.
        if (!square || !match::inner(g, div->inputs[0], pow->op_type == "Mul" ? 3 : 2)) continue;
        m->x = sub->inputs[0];
        m->gamma = mul->inputs[1 - j];
        m->beta = add_beta.inputs[1 - k];
        m->eps = static_cast<float>(match::constant(g, add_eps->inputs[e])->get_f64(0));
        m->removed = {mean->name, sub->name, pow->name, var->name, add_eps->name, sqrt->name, div->name, mul->name};
        (void)gamma;
        (void)beta;
        return true;
      }
    }
    return false;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_layernorm() { return std::make_unique<FuseLayerNorm>(); }

}  // namespace fixpoint
