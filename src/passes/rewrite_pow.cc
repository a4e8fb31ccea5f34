// Pow(x, c) with a constant scalar exponent becomes the op that computes it directly:
//   c = 2 -> Mul(x, x)      (PyTorch's torch.pow(x, 2) / x**2; the variance in LayerNorm)
//   c = 0.5 -> Sqrt(x),  c = -1 -> Reciprocal(x),  c = 1 -> x
// In float these are the same values (x*x is how pow computes a square; IEEE sqrt is exact-rounded
// like pow(x, 0.5) for x >= 0). In fixed point Mul(x, x) is an exact integer product instead of a
// table over one operand, and it keeps a whole Zero-DCE/LayerNorm graph on the accelerator.
#include "fixpoint/graph_match.h"
#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

class RewritePow : public Pass {
 public:
  std::string name() const override { return "rewrite_pow"; }
  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Node& n = g.nodes[i];
      if (n.op_type != "Pow" || !n.domain.empty() || n.inputs.size() != 2) continue;
      const Tensor* c = match::constant(g, n.inputs[1]);
      const ValueInfo* vi = g.info(n.inputs[0]);
      if (!c || c->numel() != 1 || !dtype_is_float(c->dtype()) || (vi && !dtype_is_float(vi->dtype))) continue;
      // The exponent must not broadcast the output to a higher rank.
      if (c->rank() > 0 && (!vi || !vi->shape || static_cast<int64_t>(vi->shape->size()) < c->rank())) continue;
      double e = c->get_f64(0);
      std::string label = n.label(), name = n.name;
      if (e == 2.0) {
        n.op_type = "Mul";
        n.inputs[1] = n.inputs[0];
      } else if (e == 0.5 || e == -1.0) {
        n.op_type = e == 0.5 ? "Sqrt" : "Reciprocal";
        n.inputs.resize(1);
      } else if (e == 1.0) {
        if (!match::bypass(g, i)) continue;
        --i;
        log.add(cat("removed ", label, " (exponent 1)"), {name});
        ++changed;
        continue;
      } else {
        continue;
      }
      n.attrs.clear();
      log.add(cat(label, " with exponent ", e, " became ", n.op_type), {name});
      ++changed;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_rewrite_pow() { return std::make_unique<RewritePow>(); }

}  // namespace fixpoint
