// Bias correction (on by default for calibrated compiles; docs/accuracy.md): removes the mean
// shift weight rounding causes.
#include "quantize/bias_correction.h"

#include "fixpoint/fixedpoint.h"
#include "quantize/calibration_stats.h"
#include "quantize/weight_rows.h"

namespace fixpoint {

// Bias correction (Nagel et al., 2019; docs/arithmetic.md (11b)): weight rounding shifts each
// output channel's mean by sum_k (W_q - W)[c, k] * E[x_k]; E[x] per input channel comes from the
// first calibration pass (cx.channels), and the shift is removed from the integer bias. Errors
// of earlier layers (and clipping) are deliberately not corrected: they depend on inputs, the
// weight-rounding bias does not.
void correct_biases(CompileContext& cx) {
  auto skip = [&cx](const std::string& why) {
    cx.log_rewrite("bias_correction", cat("skipped: ", why), nlohmann::json::array());
  };
  if (!cx.qdq.activations.empty() || !cx.qdq.weights.empty())
    return skip("a QDQ model fixes its weights' codes (kept as ONNX Runtime reads them)");
  if (cx.channels.empty())
    return skip("no per-channel means (compiled without --calib samples, or from statistics made before they were kept)");
  int corrected = 0, kept = 0;
  for (QOp& op : cx.prog.ops) {
    if (!op.is<params::Conv>() && !op.is<params::MatMul>()) continue;
    auto ch = cx.channels.find(op.node.inputs[0]);
    auto axis = channel_axis(op.node);
    if (ch == cx.channels.end() || !axis || ch->second.axis != *axis || ch->second.sum.empty()) continue;
    const ChannelSums& x = ch->second;
    const Tensor& w = cx.g.initializers.at(cx.original_weight.at(op.node.name));
    bool conv = op.is<params::Conv>();
    params::Weighted& pw = *weighted_params(op.params);  // a Conv or MatMul (above)
    const Tensor& qw = pw.weight;
    const double* ws = pw.weight_scale.data<double>();
    int64_t N = qw.dim(0), K = qw.numel() / N;
    int64_t cg = conv ? qw.dim(1) : K, ks = conv ? K / cg : 1;
    if (conv ? static_cast<int64_t>(x.sum.size()) % cg : static_cast<int64_t>(x.sum.size()) != K) continue;
    int64_t mg = conv ? N / (static_cast<int64_t>(x.sum.size()) / cg) : N;  // output channels per group
    QParams qx = cx.prog.tensors.at(op.node.inputs[0]);
    double sx = qx.scale;
    fx::Range acc = fx::range_of(pw.wide ? DType::Int64 : DType::Int32);
    pw.bias = pw.bias.clone();  // its own codes (tensors share storage on copy)
    // Each channel's mean shift: a function of the codes, their scales and the input means only
    // (kept for later compiles of the graph that read the same).
    std::vector<double> means(x.sum.size());
    for (size_t i = 0; i < means.size(); ++i) means[i] = x.mean(i);
    const std::vector<double> scales(ws, ws + N);
    std::string key = cat("bias_shift|", op.node.name, '|', reinterpret_cast<uintptr_t>(qw.raw()), '|',
                          PreparedCache::key_of(scales), '|', PreparedCache::key_of(means));
    struct Shifts {
      Tensor codes;  // holds the codes' storage, whose address is part of the key
      std::vector<double> shift;
    };
    auto shifts = prepared_value<Shifts>(cx.prepared.get(), key, [&]() {
      Shifts r{qw, std::vector<double>(static_cast<size_t>(N))};
      for (int64_t c = 0; c < N; ++c)
        for (int64_t k = 0; k < K; ++k) {
          int64_t in_ch = conv ? (c / mg) * cg + k / ks : k;
          double wq = qw.get_f64(c * K + k) * ws[c];
          double wf = float_weight(op, w, c, k, N, K);
          r.shift[c] += (wq - wf) * means[static_cast<size_t>(in_ch)];
        }
      return r;
    });
    for (int64_t c = 0; c < N; ++c) {
      double code = shifts->shift[c] / (sx * ws[c]);
      int64_t& b = pw.bias.data<int64_t>()[c];
      int64_t old = b;
      if (std::isfinite(code) && std::abs(code) < 0x1p62) b = fx::sat(b - static_cast<int64_t>(fx::round_half_up(code)), acc);
      // A layer accumulating in int32 (§4) keeps a channel's bias where the corrected one would
      // let the accumulator overflow: the correction is a fraction of a step, overflow is not.
      if (!pw.wide && !params::int32_holds(pw, c, qx.type, qx.zero_point)) b = old, ++kept;
    }
    ++corrected;
  }
  cx.log_rewrite("bias_correction", cat("corrected the biases of ", corrected, " layer(s)",
                                        kept ? cat(" (", kept, " channel(s) kept: int32 accumulator bound, §4)") : ""),
                 nlohmann::json::array());
}

}  // namespace fixpoint
