// Div(x, c) with a constant floating-point c -> Mul(x, 1/c): the fixed-point engine multiplies;
// the float result changes by at most one rounding of 1/c.
#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

class DivByConstant : public Pass {
 public:
  std::string name() const override { return "div_by_constant"; }
  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    for (auto& n : g.nodes) {
      if (n.op_type != "Div" || !n.domain.empty() || n.inputs.size() != 2) continue;
      auto it = g.initializers.find(n.inputs[1]);
      if (it == g.initializers.end() || it->second.dtype() != DType::Float32) continue;
      const Tensor& c = it->second;
      bool ok = true;
      for (int64_t i = 0; i < c.numel(); ++i) ok = ok && c.data<float>()[i] != 0.0f;
      if (!ok) continue;
      Tensor r(DType::Float32, c.shape());
      for (int64_t i = 0; i < c.numel(); ++i) r.data<float>()[i] = 1.0f / c.data<float>()[i];
      std::string rname = n.inputs[1] + "/reciprocal";
      g.initializers[rname] = r;
      n.op_type = "Mul";
      n.inputs[1] = rname;
      log.add(cat("node '", n.name, "': Div by a constant became Mul by its reciprocal"), {n.name});
      ++changed;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_div_by_constant() { return std::make_unique<DivByConstant>(); }

}  // namespace fixpoint
