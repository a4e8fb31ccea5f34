// Conv/ConvTranspose + BatchNormalization (inference) -> the conv with folded weights and bias:
//   W'[m] = W[m] * g[m] / sqrt(var[m] + eps),  b'[m] = (b[m] - mean[m]) * g[m] / sqrt(var[m] + eps) + beta[m]
// Needed before quantization: per-channel weight scales then see the folded weights.
#include <algorithm>
#include <cmath>

#include "fixpoint/conv_layout.h"
#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

class FuseConvBatchNorm : public Pass {
 public:
  std::string name() const override { return "fuse_conv_batchnorm"; }
  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Node& bn = g.nodes[i];
      if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() < 5) continue;
      if (bn.attr_int("training_mode", 0) != 0 || std::count_if(bn.outputs.begin(), bn.outputs.end(), [](const auto& o) { return !o.empty(); }) != 1) continue;
      auto prod = g.producers();
      auto it = prod.find(bn.inputs[0]);
      if (it == prod.end()) continue;
      Node& conv = g.nodes[it->second];
      if (!conv_layout::is_conv(conv) || g.use_counts()[conv.outputs[0]] != 1 ||
          g.is_graph_output(conv.outputs[0]))
        continue;
      bool consts = g.initializers.count(conv.inputs[1]) && (conv.inputs.size() < 3 || conv.inputs[2].empty() || g.initializers.count(conv.inputs[2]));
      for (size_t k = 1; k < 5; ++k) consts = consts && g.initializers.count(bn.inputs[k]);
      if (!consts) continue;
      const Tensor& w = g.initializers.at(conv.inputs[1]);
      if (w.dtype() != DType::Float32) continue;
      int64_t M = conv_layout::out_channels(conv, w);
      const Tensor &gamma = g.initializers.at(bn.inputs[1]), &beta = g.initializers.at(bn.inputs[2]),
                   &mean = g.initializers.at(bn.inputs[3]), &var = g.initializers.at(bn.inputs[4]);
      if (gamma.numel() != M || beta.numel() != M || mean.numel() != M || var.numel() != M) continue;
      double eps = bn.attr_float("epsilon", 1e-5f);
      Tensor nw(DType::Float32, w.shape()), nb(DType::Float32, {M});
      const Tensor* b = conv.inputs.size() > 2 && !conv.inputs[2].empty() ? &g.initializers.at(conv.inputs[2]) : nullptr;
      if (b && b->numel() != M) continue;
      std::vector<double> a(static_cast<size_t>(M));
      for (int64_t m = 0; m < M; ++m) {
        a[m] = gamma.get_f64(m) / std::sqrt(var.get_f64(m) + eps);
        nb.data<float>()[m] = static_cast<float>(((b ? b->get_f64(m) : 0.0) - mean.get_f64(m)) * a[m] + beta.get_f64(m));
      }
      for (int64_t i = 0; i < w.numel(); ++i)
        nw.data<float>()[i] = static_cast<float>(w.get_f64(i) * a[conv_layout::out_channel(conv, w, i)]);
      std::string wname = conv.name + "/folded_weight", bname = conv.name + "/folded_bias";
      g.initializers[wname] = nw;
      g.initializers[bname] = nb;
      conv.inputs.resize(3);
      conv.inputs[1] = wname;
      conv.inputs[2] = bname;
      conv.outputs[0] = bn.outputs[0];
      log.add(cat("folded ", bn.label(), " into ", conv.label()), {bn.name, conv.name});
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
      --i;
      ++changed;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_conv_batchnorm() { return std::make_unique<FuseConvBatchNorm>(); }

}  // namespace fixpoint
