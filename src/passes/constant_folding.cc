// Constant folding: a node whose inputs are all initializers is evaluated with the reference
// kernel and replaced by initializers. Shape(x) folds when x's shape is statically known (after
// --shape binding and ONNX shape inference), so Shape/Gather/Cast/Concat/Slice/Unsqueeze chains
// that compute a Reshape target collapse to one constant.
#include <algorithm>

#include "fixpoint/passes.h"
#include "fixpoint/runtime.h"

namespace fixpoint {
namespace {

// Ops never folded: no kernel side effects exist, but randomness must not become a constant.
bool foldable_op(const Node& n) {
  static const char* kNever[] = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                                 "Bernoulli"};
  for (const char* op : kNever)
    if (n.op_type == op) return false;
  return n.domain.empty() && KernelRegistry::reference().find(n.op_type, n.domain) != nullptr;
}

// Folded tensors larger than this stay computed at run time (ConstantOfShape of a big
// activation-sized buffer would bloat the graph).
constexpr int64_t kMaxFoldedElements = int64_t{1} << 22;

class ConstantFolding : public Pass {
 public:
  std::string name() const override { return "constant_folding"; }
  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    std::vector<Node> kept;
    for (auto& n : g.nodes) {
      if (try_fold(g, n, log)) {
        ++changed;
      } else {
        kept.push_back(std::move(n));
      }
    }
    g.nodes = std::move(kept);
    return changed;
  }

 private:
  bool try_fold(Graph& g, const Node& n, PassLog& log) {
    if (!foldable_op(n)) return false;
    for (const auto& o : n.outputs)
      if (g.is_graph_output(o)) return false;  // keep graph outputs computed by a node
    if (n.op_type == "Shape" && n.domain.empty()) {
      // A constant's shape is its own (a tensor folded earlier in this pass has no inferred
      // shape yet: Swin's attention mask is Shape(Expand(folded ...)) chains).
      auto c = g.initializers.find(n.inputs.at(0));
      const ValueInfo* vi = g.info(n.inputs.at(0));
      if (c == g.initializers.end() && (!vi || !vi->shape_known())) return false;
      Shape s = c != g.initializers.end() ? c->second.shape() : vi->static_shape();
      int64_t r = static_cast<int64_t>(s.size());
      int64_t start = n.attr_int("start", 0), end = n.attr_int("end", r);
      auto clampi = [r](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
      std::vector<int64_t> v(s.begin() + clampi(start), s.begin() + std::max(clampi(start), clampi(end)));
      g.initializers[n.outputs[0]] = Tensor::from_i64(v, {static_cast<int64_t>(v.size())});
      log.add(cat("folded ", n.label(), " -> ", shape_str({static_cast<int64_t>(v.size())})), {n.name});
      return true;
    }
    std::vector<const Tensor*> ins;
    for (const auto& in : n.inputs) {
      if (in.empty()) { ins.push_back(nullptr); continue; }
      auto it = g.initializers.find(in);
      if (it == g.initializers.end()) return false;
      ins.push_back(&it->second);
    }
    std::vector<Tensor> outs;
    try {
      outs = run_node(n, ins);
    } catch (const Error&) {
      return false;  // leave it for run time, which reports the error with real inputs
    }
    for (const auto& t : outs)
      if (t.numel() > kMaxFoldedElements) return false;
    for (size_t i = 0; i < outs.size(); ++i)
      if (!n.outputs[i].empty()) g.initializers[n.outputs[i]] = outs[i].clone();
    log.add(cat("folded ", n.label()), {n.name});
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_constant_folding() { return std::make_unique<ConstantFolding>(); }

}  // namespace fixpoint
