// Layout chains that exporters leave behind, simplified (data movement costs the accelerator a
// pass over memory each, and every extra node is one more place for a partition boundary):
//   {Reshape, Flatten, Squeeze, Unsqueeze}(x) -> Reshape(., s)  =>  Reshape(x, s)
//       when s is a constant with no 0 entry (a 0 copies a dim of the Reshape's input, which
//       changes when that input changes) and the inner result is read only there;
//   Transpose(Transpose(x, p), q)  =>  Transpose(x, r) with r[i] = p[q[i]]  (identity: removed);
//   Transpose with the identity permutation, Reshape to its input's own static shape  =>  removed.
#include <algorithm>

#include "fixpoint/graph_match.h"
#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

bool is_identity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

class SimplifyReshapeTranspose : public Pass {
 public:
  std::string name() const override { return "simplify_reshape_transpose"; }
  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (step(g, i, log)) {
        ++changed;
        i = static_cast<size_t>(-1);
      }
    }
    return changed;
  }

 private:
  static bool removable_noop(const Graph& g, const Node& n) {
    if (n.op_type == "Transpose") {
      std::vector<int64_t> p = n.attr_ints("perm");
      return !p.empty() && is_identity(p);
    }
    if (n.op_type == "Reshape") {
      const ValueInfo* x = g.info(n.inputs[0]);
      const ValueInfo* y = g.info(n.outputs[0]);
      return x && y && x->shape_known() && y->shape_known() && x->static_shape() == y->static_shape();
    }
    return false;
  }

  static bool step(Graph& g, size_t i, PassLog& log) {
    Node& n = g.nodes[i];
    if (!n.domain.empty() || n.inputs.empty()) return false;
    std::string label = n.label(), name = n.name;
    if (removable_noop(g, n)) {
      if (!match::bypass(g, i)) return false;
      log.add(cat("removed ", label, " (no-op)"), {name});
      return true;
    }
    const Node* inner = match::producer(g, n.inputs[0]);
    if (!inner || !inner->domain.empty() || !match::inner(g, n.inputs[0])) return false;
    std::string inner_name = inner->name, inner_label = inner->label();
    if (n.op_type == "Reshape" && n.inputs.size() == 2 &&
        (inner->op_type == "Reshape" || inner->op_type == "Flatten" || inner->op_type == "Squeeze" ||
         inner->op_type == "Unsqueeze")) {
      const Tensor* s = match::constant(g, n.inputs[1]);
      if (!s) return false;
      for (int64_t v : s->to_i64_vector())
        if (v == 0) return false;
      n.inputs[0] = inner->inputs[0];
    } else if (n.op_type == "Transpose" && inner->op_type == "Transpose") {
      std::vector<int64_t> p = inner->attr_ints("perm"), q = n.attr_ints("perm");
      if (p.empty() || q.size() != p.size()) return false;  // default perms need the rank
      std::vector<int64_t> r(q.size());
      for (size_t k = 0; k < q.size(); ++k) r[k] = p[static_cast<size_t>(q[k])];
      n.inputs[0] = inner->inputs[0];
      n.attrs["perm"] = Attribute::of_ints(r);
    } else {
      return false;
    }
    g.nodes.erase(std::find_if(g.nodes.begin(), g.nodes.end(), [&](const Node& m) { return m.name == inner_name; }));
    log.add(cat("merged ", inner_label, " into ", label), {inner_name, name});
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_simplify_reshape_transpose() { return std::make_unique<SimplifyReshapeTranspose>(); }

}  // namespace fixpoint
