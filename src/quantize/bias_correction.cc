// --bias-correction (docs/accuracy.md): removes the mean shift weight rounding causes.
#include "quantize/bias_correction.h"

#include "fixpoint/fixedpoint.h"
#include "fixpoint/float_kernels.h"
#include "fixpoint/parallel.h"
#include "fixpoint/runtime.h"
#include "quantize/calibration_stats.h"

namespace fixpoint {
namespace {

// W[c][k] of the float weights in the layout the op's integer weights use.
double normalized_weight(const QOp& op, const Tensor& w, int64_t c, int64_t k, int64_t N, int64_t K) {
  if (op.node.op_type == "Conv") return w.get_f64(c * K + k);
  if (op.node.op_type == "Gemm") {
    double alpha = op.node.attr_float("alpha", 1.0f);
    return alpha * w.get_f64(op.node.attr_int("transB", 0) ? c * K + k : k * N + c);
  }
  return w.get_f64(k * N + c);  // MatMul B is K x N
}

}  // namespace

// Bias correction (Nagel et al., 2019): weight rounding shifts each output channel's mean by
// sum_k (W_q - W)[c, k] * E[x_k]; E[x] per input channel comes from the float calibration
// run, and the shift is removed from the integer bias. Errors of earlier layers (and clipping)
// are deliberately not corrected: they depend on inputs, the weight-rounding bias does not.
void correct_biases(CompileContext& cx, const CalibrationSource& calib) {
  std::map<std::string, std::vector<size_t>> readers;  // input tensor -> conv/matmul ops
  for (size_t i = 0; i < cx.prog.ops.size(); ++i)
    if (cx.prog.ops[i].is<params::Conv>() || cx.prog.ops[i].is<params::MatMul>()) readers[cx.prog.ops[i].node.inputs[0]].push_back(i);
  std::map<std::string, std::vector<double>> sums;
  std::map<std::string, double> counts;
  auto observe = [&](const std::string& t, const Tensor& v) {
    auto it = readers.find(t);
    if (it == readers.end() || !dtype_is_float(v.dtype())) return;
    bool conv = cx.prog.ops[it->second[0]].is<params::Conv>();
    int64_t C = conv ? v.dim(1) : v.dim(-1), inner = 1;
    if (conv)
      for (int64_t d = 2; d < v.rank(); ++d) inner *= v.dim(d);
    auto& acc = sums[t];
    acc.resize(static_cast<size_t>(C), 0.0);
    for (int64_t i = 0; i < v.numel(); ++i) acc[conv ? (i / inner) % C : i % C] += v.get_f64(i);
    counts[t] += static_cast<double>(v.numel() / C);
  };
  Executor ex(cx.g, fast_float_kernels());
  RunOptions ro;
  ro.threads = default_threads();
  ro.on_node = [&](const Node& n, const std::vector<Tensor>& outs) {
    for (size_t i = 0; i < outs.size(); ++i) observe(n.outputs[i], outs[i]);
  };
  for (size_t i = 0; i < calib.size(); ++i) {
    auto sample = calibration_sample(cx, calib, i);
    for (const auto& [name, t] : sample) observe(name, t);
    ex.run(sample, ro);
  }
  int corrected = 0;
  for (auto& [t, ops] : readers) {
    if (!counts[t]) continue;
    for (size_t idx : ops) {
      QOp& op = cx.prog.ops[idx];
      const Tensor& w = cx.g.initializers.at(cx.original_weight.at(op.node.name));
      bool conv = op.is<params::Conv>();
      params::Weighted& pw = *weighted_params(op.params);  // a Conv or MatMul (readers above)
      const Tensor& qw = pw.weight;
      const double* ws = pw.weight_scale.data<double>();
      double sx = cx.prog.tensors.at(t).scale;
      int64_t N = qw.dim(0), K = qw.numel() / N;
      int64_t cg = conv ? qw.dim(1) : K, ks = conv ? K / cg : 1, mg = conv ? N / (static_cast<int64_t>(sums[t].size()) / cg) : N;
      Tensor bias = pw.bias.clone();
      fx::Range acc = fx::range_of(pw.wide ? DType::Int64 : DType::Int32);
      for (int64_t c = 0; c < N; ++c) {
        double shift = 0;
        for (int64_t k = 0; k < K; ++k) {
          int64_t in_ch = conv ? (c / mg) * cg + k / ks : k;
          double wq = qw.get_f64(c * K + k) * ws[c];
          double wf = normalized_weight(op, w, c, k, N, K);
          shift += (wq - wf) * sums[t][static_cast<size_t>(in_ch)] / counts[t];
        }
        bias.data<int64_t>()[c] = fx::sat(bias.data<int64_t>()[c] - static_cast<int64_t>(fx::round_half_up(shift / (sx * ws[c]))), acc);
      }
      pw.bias = bias;
      ++corrected;
    }
  }
  cx.log_rewrite("bias_correction", cat("corrected the biases of ", corrected, " layer(s)"), nlohmann::json::array());
}

}  // namespace fixpoint
