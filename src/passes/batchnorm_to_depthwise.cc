// A BatchNormalization with no Conv before it (after a Concat in DenseNet, at a network's input)
// -> a depthwise 1x1 Conv with the same per-channel affine:
//   W[c] = g[c] / sqrt(var[c] + eps),  b[c] = beta[c] - mean[c] * W[c]
// The accelerator runs it as an integer Conv (its per-channel weight scales make it exact to the
// rounding of (13)) instead of a CPU fallback that splits the graph into subgraphs. Runs after
// fuse_conv_batchnorm, so only standalone ones are left; the node keeps its name and output.
#include <cmath>

#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

class BatchNormToDepthwise : public Pass {
 public:
  std::string name() const override { return "batchnorm_to_depthwise"; }
  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    for (Node& bn : g.nodes) {
      if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() < 5) continue;
      if (bn.attr_int("training_mode", 0) != 0) continue;
      bool one_output = true;
      for (size_t k = 1; k < bn.outputs.size(); ++k) one_output = one_output && bn.outputs[k].empty();
      if (!one_output) continue;
      bool consts = true;
      for (size_t k = 1; k < 5; ++k) consts = consts && g.initializers.count(bn.inputs[k]);
      const ValueInfo* vi = g.info(bn.inputs[0]);
      if (!consts || !vi || !vi->shape || vi->shape->size() < 3 || vi->shape->size() > 5) continue;
      const Tensor &gamma = g.initializers.at(bn.inputs[1]), &beta = g.initializers.at(bn.inputs[2]),
                   &mean = g.initializers.at(bn.inputs[3]), &var = g.initializers.at(bn.inputs[4]);
      int64_t C = gamma.numel();
      const Dim& cd = (*vi->shape)[1];
      if (!cd.known() || cd.value != C || beta.numel() != C || mean.numel() != C || var.numel() != C) continue;
      if (gamma.dtype() != DType::Float32) continue;
      double eps = bn.attr_float("epsilon", 1e-5f);
      int64_t spatial = static_cast<int64_t>(vi->shape->size()) - 2;
      Shape ws = {C, 1};
      for (int64_t d = 0; d < spatial; ++d) ws.push_back(1);
      Tensor w(DType::Float32, ws), b(DType::Float32, {C});
      for (int64_t c = 0; c < C; ++c) {
        double a = gamma.get_f64(c) / std::sqrt(var.get_f64(c) + eps);
        w.data<float>()[c] = static_cast<float>(a);
        b.data<float>()[c] = static_cast<float>(beta.get_f64(c) - mean.get_f64(c) * a);
      }
      std::string wname = bn.name + "/depthwise_weight", bname = bn.name + "/depthwise_bias";
      g.initializers[wname] = w;
      g.initializers[bname] = b;
      std::string was = bn.label();
      bn.op_type = "Conv";
      bn.inputs = {bn.inputs[0], wname, bname};
      bn.outputs.resize(1);
      bn.attrs.clear();
      bn.attrs["group"] = Attribute::of_int(C);
      bn.attrs["kernel_shape"] = Attribute::of_ints(std::vector<int64_t>(static_cast<size_t>(spatial), 1));
      log.add(cat("rewrote ", was, " (no Conv before it) as a depthwise 1x1 Conv"), {bn.name});
      ++changed;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_batchnorm_to_depthwise() { return std::make_unique<BatchNormToDepthwise>(); }

}  // namespace fixpoint
