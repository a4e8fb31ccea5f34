// Conv(Concat(a_1, ..., a_k; channels), W, b) -> Conv(a_1, W_1, b) + Conv(a_2, W_2) + ... where
// W_i holds W's input channels that read a_i. The same sum in float (reordered, so equal to
// ~1e-7 relative). Why: a Concat stores its inputs at one scale, and a skip connection's small
// feature map (Zero-DCE's x1 with range 0.23, concatenated with x6 of range 4.5) loses four bits
// of its eight to the big one. Split, each Conv reads its input at the input's own scale and the
// partial sums meet in the Add inside the fused kernel (docs/arithmetic.md §2.7), where they keep
// 16 bits. MACs are unchanged.
#include "fixpoint/graph_match.h"
#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

class SplitConcatConv : public Pass {
 public:
  std::string name() const override { return "split_concat_conv"; }
  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& conv = g.nodes[i];
      if (conv.op_type != "Conv" || !conv.domain.empty() || conv.attr_int("group", 1) != 1 || conv.inputs.size() < 2)
        continue;
      auto prod = g.producers();
      auto pc = prod.find(conv.inputs[0]);
      const Tensor* w = match::constant(g, conv.inputs[1]);
      if (pc == prod.end() || !w || w->dtype() != DType::Float32 || w->rank() < 3 || !match::inner(g, conv.inputs[0]))
        continue;
      size_t cat_index = pc->second;
      if (cat_index > i) continue;  // the index arithmetic below needs the Concat first (sorted graphs)
      const Node* cat_node = &g.nodes[cat_index];
      int64_t axis = cat_node->attr_int("axis", 0);
      if (cat_node->op_type != "Concat" || !cat_node->domain.empty() || (axis < 0 ? axis + w->rank() : axis) != 1) continue;
      std::vector<int64_t> channels;
      for (const auto& in : cat_node->inputs) {
        const ValueInfo* vi = g.info(in);
        if (in.empty() || !vi || !vi->shape || vi->shape->size() != static_cast<size_t>(w->rank())) break;
        const auto& d = (*vi->shape)[1];
        if (!d.known() || g.initializers.count(in)) break;
        channels.push_back(d.value);
      }
      int64_t total = 0;
      for (int64_t c : channels) total += c;
      if (channels.size() != cat_node->inputs.size() || channels.size() < 2 || total != w->dim(1)) continue;
      // One Conv per Concat input, the bias on the first; an Add chain writes the Conv's output.
      Node base = conv;
      std::string cat_name = cat_node->name, out = conv.outputs[0];
      const ValueInfo* vo = g.info(out);
      std::optional<ValueInfo> out_info = vo ? std::optional<ValueInfo>(*vo) : std::nullopt;
      std::vector<Node> replacement;
      int64_t per_out = w->numel() / w->dim(0), spatial = per_out / w->dim(1), c0 = 0;
      std::string sum;
      for (size_t k = 0; k < channels.size(); ++k) {
        Shape ws = w->shape();
        ws[1] = channels[k];
        Tensor part(DType::Float32, ws);
        for (int64_t m = 0; m < w->dim(0); ++m)
          for (int64_t c = 0; c < channels[k]; ++c)
            for (int64_t s = 0; s < spatial; ++s)
              part.data<float>()[(m * channels[k] + c) * spatial + s] = w->data<float>()[m * per_out + (c0 + c) * spatial + s];
        c0 += channels[k];
        Node p = base;
        p.name = cat(base.name, "/part", k);
        std::string wname = cat(p.name, "/weight");
        g.initializers[wname] = part;
        p.inputs = {cat_node->inputs[k], wname};
        if (k == 0 && base.inputs.size() > 2) p.inputs.push_back(base.inputs[2]);
        p.outputs = {cat(out, "/part", k)};
        if (out_info) g.value_info[p.outputs[0]] = ValueInfo{p.outputs[0], out_info->dtype, out_info->shape};
        replacement.push_back(p);
        if (k == 0) {
          sum = p.outputs[0];
          continue;
        }
        Node add;
        add.name = cat(base.name, "/sum", k);
        add.op_type = "Add";
        add.opset = g.opsets.count("") ? g.opsets.at("") : 13;
        add.inputs = {sum, p.outputs[0]};
        sum = k + 1 == channels.size() ? out : cat(out, "/sum", k);
        add.outputs = {sum};
        if (out_info && sum != out) g.value_info[sum] = ValueInfo{sum, out_info->dtype, out_info->shape};
        replacement.push_back(add);
      }
      log.add(cat("split ", base.label(), " over Concat '", cat_name, "' into ", channels.size(), " Convs and their sum"),
              {base.name, cat_name});
      // The Conv's place takes the replacement; the Concat (its output had this Conv as only
      // reader, and it stands before the Conv) goes, so the replacement starts at i - 1.
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
      g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(i), replacement.begin(), replacement.end());
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(cat_index));
      i += replacement.size() - 2;  // the loop's ++i moves to the first node after the replacement
      changed += static_cast<int>(replacement.size());
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_split_concat_conv() { return std::make_unique<SplitConcatConv>(); }

}  // namespace fixpoint
