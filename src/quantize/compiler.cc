// The fixed-point compiler: calibrate, choose widths and scales, fuse activations, and prepare
// every integer op's constants (docs/arithmetic.md §2-§5). Ops without an integer kernel stay
// float ("float" kind, CPU fallback) and are listed in the report.
#include "fixpoint/compiler.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "fixpoint/fixedpoint.h"
#include "fixpoint/graph_match.h"
#include "fixpoint/partition.h"
#include "fixpoint/passes.h"
#include "fixpoint/runtime.h"
#include "histogram.h"
#include <array>
#include <optional>

namespace fixpoint {
namespace {

using json = nlohmann::json;

const std::set<std::string> kNonNegativeOps = {"Relu", "Sigmoid", "HardSigmoid", "Softmax", "Abs", "Exp", "Sqrt"};

// (7a) Grids network inputs often live on exactly: integers (raw pixels) and 8-bit data
// normalized by 255 or 256. Coarsest first.
constexpr std::array<double, 3> kInputGrids = {1.0, 1.0 / 255.0, 1.0 / 256.0};

struct Stats {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  std::array<bool, kInputGrids.size()> on_grid{};  // every value seen is a multiple of grid g
  bool grid_tracked = false;
  void add(const Tensor& t, bool track_grid = false) {
    if (!dtype_is_float(t.dtype())) return;
    if (track_grid && !grid_tracked) {
      grid_tracked = true;
      on_grid.fill(true);
    }
    const float* p = t.dtype() == DType::Float32 ? t.data<float>() : nullptr;
    for (int64_t i = 0; i < t.numel(); ++i) {
      double v = p ? p[i] : t.get_f64(i);
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      for (size_t g = 0; track_grid && g < kInputGrids.size(); ++g)
        on_grid[g] = on_grid[g] && std::abs(v / kInputGrids[g] - std::round(v / kInputGrids[g])) < 1e-3;
    }
  }
  bool seen() const { return lo <= hi; }
  double absmax() const { return seen() ? std::max(std::abs(lo), std::abs(hi)) : 0.0; }
};

}  // namespace

// Calibration statistics of one compile, reused by later compiles of the same model (shapes,
// passes and samples) that differ only in widths: what `fixpoint analyze` needs for its
// two compiles per layer.
struct CalibrationCache {
  bool filled = false;
  std::string method;
  std::map<std::string, Stats> stats;
  std::map<std::string, AbsHistogram> hist;
};

std::shared_ptr<CalibrationCache> make_calibration_cache() { return std::make_shared<CalibrationCache>(); }

namespace {

DType code_type(int bits, bool non_negative) {
  if (bits == 16) return non_negative ? DType::UInt16 : DType::Int16;
  return non_negative ? DType::UInt8 : DType::Int8;
}

// The real values a code type and zero point can represent: [(q_min - z) s, (q_max - z) s].
std::pair<double, double> real_range(const QParams& q) {
  fx::Range r = fx::range_of(q.type);
  return {static_cast<double>(r.lo - q.zero_point) * q.scale, static_cast<double>(r.hi - q.zero_point) * q.scale};
}

// docs/arithmetic.md (7), (8)
double activation_scale(double hi, DType t, bool pow2) {
  fx::Range r = fx::range_of(t);
  if (!(hi > 0)) return 1.0;  // an all-zero tensor: any scale represents it exactly
  if (pow2) {
    int n_t = static_cast<int>(dtype_size(t) * 8) - (r.lo < 0 ? 1 : 0);
    return std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(hi))) - n_t);
  }
  return hi / static_cast<double>(r.hi);
}

// docs/arithmetic.md (9)
double weight_scale(double absmax, DType t, bool pow2) {
  double qmax = static_cast<double>(fx::range_of(t).hi);
  if (!(absmax > 0)) return 1.0;
  if (pow2) return std::ldexp(1.0, -static_cast<int>(std::floor(std::log2(qmax / absmax))));
  return absmax / qmax;
}

// Clip bounds from attributes (opset < 11) or constant inputs; false when not constant.
bool clip_bounds(const Graph& g, const Node& n, double* lo, double* hi) {
  *lo = -std::numeric_limits<double>::infinity();
  *hi = std::numeric_limits<double>::infinity();
  if (n.op_type == "Relu") {
    *lo = 0;
    return true;
  }
  if (n.op_type != "Clip") return false;
  if (n.opset < 11) {
    if (n.has_attr("min")) *lo = n.attr_float("min", 0);
    if (n.has_attr("max")) *hi = n.attr_float("max", 0);
    return true;
  }
  for (size_t k : {1, 2}) {
    if (k >= n.inputs.size() || n.inputs[k].empty()) continue;
    auto it = g.initializers.find(n.inputs[k]);
    if (it == g.initializers.end()) return false;
    (k == 1 ? *lo : *hi) = it->second.get_f64(0);
  }
  return true;
}

class Compiler {
 public:
  Compiler(const CompileOptions& o) : opts_(o), pow2_(o.scale_mode == "pow2") {}

  CompileResult run(const std::string& path, const CalibrationSource* calib) {
    FP_CHECK(opts_.bits == 8 || opts_.bits == 16 || opts_.bits == 32, "--bits must be 8, 16 or 32, got ", opts_.bits);
    FP_CHECK(opts_.scale_mode == "float" || opts_.scale_mode == "pow2", "--scale-mode must be float or pow2, got '",
             opts_.scale_mode, "'");
    FP_CHECK(opts_.calib_method != "entropy",
             "--calib-method 'entropy' was removed: KL calibration clipped the long tails of HardSwish outputs to "
             "1/30 of their range (PaddleOCR recognizer int8: 0% character accuracy, docs/accuracy.md); use percentile "
             "(default) or mse");
    FP_CHECK(opts_.calib_method == "minmax" || opts_.calib_method == "percentile" || opts_.calib_method == "mse",
             "--calib-method '", opts_.calib_method, "' is unknown (percentile, minmax, mse)");
    PipelineOptions po;
    po.shapes = opts_.shapes;
    if (calib && calib->size()) {
      // A stacked file may also be a plain batch [N, C, H, W] for a model input [1, C, H, W]:
      // then each sample gets its batch dim of 1 back.
      Graph probe = import_onnx_file(path, ImportOptions{{}, false});
      for (const auto& [name, t] : calib->sample(0)) {
        auto it = std::find_if(probe.inputs.begin(), probe.inputs.end(), [&](const ValueInfo& v) { return v.name == name; });
        FP_CHECK(it != probe.inputs.end(), "--calib ", name, ": the model has no input named '", name, "'");
      }
      model_inputs_ = probe.inputs;
      // Calibration shapes are not bound into the graph: the program keeps the model's dynamic
      // dims (any batch size runs). --shape binds them when the model needs static shapes.
    }
    po.before_passes = [this](Graph& g) { qdq_.weights = qdq_weights(g); };
    g_ = load_model(path, po);
    PassLog qlog;
    qdq_.activations = fold_qdq_pairs(g_, qlog);
    for (const auto& e : qlog.entries) {
      rewrites_.push_back("fold_qdq: " + e.detail);
      rewrite_entries_.push_back({{"pass", "fold_qdq"}, {"detail", e.detail}, {"nodes", e.nodes}});
    }
    for (const auto& n : g_.nodes)
      if (n.op_type == "Softmax" || n.op_type == "Sigmoid" || n.op_type == "HardSigmoid" || n.op_type == "Tanh")
        bounded_.insert(n.outputs[0]);
    before_rewrites_ = g_;  // (tensor storage is shared: a cheap copy)
    // split_concat_conv pays only where its partial sums stay 16-bit inside the fused Add (§2.7):
    // a 16-bit program would round each partial sum to 16 bits, more error than its Concat's.
    std::vector<std::string> disabled = opts_.disabled_passes;
    if ((opts_.bits != 8 || !opts_.wide_intermediates) &&
        std::find(disabled.begin(), disabled.end(), "split_concat_conv") == disabled.end())
      disabled.push_back("split_concat_conv");
    PassLog plog = PassManager::compile_time(disabled).run(g_);
    for (const auto& l : plog.lines) rewrites_.push_back(l);
    for (const auto& e : plog.entries) rewrite_entries_.push_back({{"pass", e.pass}, {"detail", e.detail}, {"nodes", e.nodes}});
    part_ = partition_graph(g_, PartitionOptions{opts_.deny, opts_.allow});
    if (opts_.bits == 8 && opts_.wide_intermediates) find_fused_intermediates();

    prog_.source_model = path;
    prog_.scale_mode = opts_.scale_mode;
    prog_.bits = opts_.bits;
    prog_.inputs = g_.inputs;
    prog_.outputs = g_.outputs;
    for (auto& o : prog_.outputs) o.dtype = DType::Float32;

    if (opts_.bits != 32) {
      if (opts_.qat) collect_qat_ranges();
      auto& cache = opts_.calibration_cache;
      if (calib && cache && cache->filled && cache->method == opts_.calib_method) {
        stats_ = cache->stats;  // same model, passes and samples: the statistics are the same
        hist_ = cache->hist;
      } else if (calib) {
        calibrate(*calib);
        if (cache) *cache = {true, opts_.calib_method, stats_, hist_};
      } else if (qdq_.activations.empty()) {
        FP_CHECK(opts_.qat, "--calib is required for --bits ", opts_.bits, " (or use --qat for a QAT model)");
      }
    }
    plan();
    if (opts_.bias_correction && calib && opts_.bits != 32) correct_biases(*calib);
    drop_unread_constants();
    return finish();
  }

 private:
  const CompileOptions& opts_;
  bool pow2_;
  Graph g_;
  Program prog_;
  std::map<std::string, Stats> stats_;
  std::map<std::string, AbsHistogram> hist_;  // second calibration pass (not minmax)
  std::map<std::string, std::pair<double, double>> qat_ranges_;
  QdqParams qdq_;  // encodings an imported QDQ model fixes (§2.6)
  std::set<std::string> nonneg_;
  std::set<std::string> bounded_;
  std::map<std::string, std::string> original_weight_;  // conv/matmul op -> float weight initializer  // outputs of Softmax/Sigmoid/HardSigmoid/Tanh
  std::vector<std::string> rewrites_;  // readable lines for compile_report.txt
  json rewrite_entries_ = json::array();  // {pass, detail, nodes} for compile_report.json
  std::set<std::string> consumed_;  // nodes fused into an earlier op
  std::set<std::string> fused_intermediates_;  // §2.7: kept at 16 bits in 8-bit layers
  Partition part_;                  // which nodes the accelerator runs (capability, deny/allow, islands)
  Graph before_rewrites_;           // the imported graph, for the tensors rewrites and fusion removed
  std::vector<ValueInfo> model_inputs_;  // as imported: calibration samples may lack their batch dim
  // Non-finite values calibration met (§2.8): ranges ignore them, the report counts them.
  struct {
    NonFinite inputs, tensors;
  } calib_nonfinite_;
  json precision_warnings_ = json::array();  // {layer, detail}: where the integer result cannot be exact

  // A layer whose integer arithmetic loses something float keeps: listed in the report (and
  // printed by the CLI), never silent.
  void warn_precision(const std::string& layer, const std::string& detail) {
    precision_warnings_.push_back({{"layer", layer}, {"detail", detail}});
  }

  // Sample i with the batch dim restored for inputs given without it.
  std::map<std::string, Tensor> calibration_sample(const CalibrationSource& calib, size_t i) const {
    return with_batch_dim(calib.sample(i), model_inputs_);
  }

  // Pass 1: min/max of every tensor. Pass 2 (methods other than minmax): histograms of |x| over
  // [0, max|x|]. Both stream over the samples; memory is per tensor, not per sample.
  void calibrate(const CalibrationSource& calib) {
    Executor ex(g_);
    bool hist = opts_.calib_method != "minmax";
    for (int pass = 0; pass < (hist ? 2 : 1); ++pass) {
      auto observe = [this, pass](const std::string& t, const Tensor& v) {
        if (pass == 0) {
          stats_[t].add(v, is_graph_input(t));
          return;
        }
        auto it = hist_.find(t);
        if (it == hist_.end()) it = hist_.emplace(t, AbsHistogram(stats_[t].absmax())).first;
        it->second.add(v);
      };
      RunOptions ro;
      ro.on_node = [&](const Node& n, const std::vector<Tensor>& outs) {
        for (size_t i = 0; i < outs.size(); ++i) {
          if (n.outputs[i].empty()) continue;
          observe(n.outputs[i], outs[i]);
          if (pass == 0) calib_nonfinite_.tensors += count_nonfinite(outs[i]);
        }
      };
      for (size_t i = 0; i < calib.size(); ++i) {
        auto sample = calibration_sample(calib, i);
        for (const auto& [name, t] : sample) {
          observe(name, t);
          if (pass == 0) calib_nonfinite_.inputs += count_nonfinite(t);
        }
        ex.run(sample, ro);
        if (opts_.progress && (i + 1 == calib.size() || (i + 1) % 10 == 0))
          opts_.progress(cat("calibration", hist ? cat(" pass ", pass + 1, "/2") : "", ": ", i + 1, "/", calib.size(),
                             " samples"));
      }
    }
  }

  // Bias correction (Nagel et al., 2019): weight rounding shifts each output channel's mean by
  // sum_k (W_q - W)[c, k] * E[x_k]; E[x] per input channel comes from the float calibration
  // run, and the shift is removed from the integer bias. Errors of earlier layers (and clipping)
  // are deliberately not corrected: they depend on inputs, the weight-rounding bias does not.
  void correct_biases(const CalibrationSource& calib) {
    std::map<std::string, std::vector<size_t>> readers;  // input tensor -> conv/matmul ops
    for (size_t i = 0; i < prog_.ops.size(); ++i)
      if (prog_.ops[i].is<params::Conv>() || prog_.ops[i].is<params::MatMul>()) readers[prog_.ops[i].node.inputs[0]].push_back(i);
    std::map<std::string, std::vector<double>> sums;
    std::map<std::string, double> counts;
    auto observe = [&](const std::string& t, const Tensor& v) {
      auto it = readers.find(t);
      if (it == readers.end() || !dtype_is_float(v.dtype())) return;
      bool conv = prog_.ops[it->second[0]].is<params::Conv>();
      int64_t C = conv ? v.dim(1) : v.dim(-1), inner = 1;
      if (conv)
        for (int64_t d = 2; d < v.rank(); ++d) inner *= v.dim(d);
      auto& acc = sums[t];
      acc.resize(static_cast<size_t>(C), 0.0);
      for (int64_t i = 0; i < v.numel(); ++i) acc[conv ? (i / inner) % C : i % C] += v.get_f64(i);
      counts[t] += static_cast<double>(v.numel() / C);
    };
    Executor ex(g_);
    RunOptions ro;
    ro.on_node = [&](const Node& n, const std::vector<Tensor>& outs) {
      for (size_t i = 0; i < outs.size(); ++i) observe(n.outputs[i], outs[i]);
    };
    for (size_t i = 0; i < calib.size(); ++i) {
      auto sample = calibration_sample(calib, i);
      for (const auto& [name, t] : sample) observe(name, t);
      ex.run(sample, ro);
    }
    int corrected = 0;
    for (auto& [t, ops] : readers) {
      if (!counts[t]) continue;
      for (size_t idx : ops) {
        QOp& op = prog_.ops[idx];
        const Tensor& w = g_.initializers.at(original_weight_.at(op.node.name));
        bool conv = op.is<params::Conv>();
        params::Weighted& pw = *weighted_params(op.params);  // a Conv or MatMul (readers above)
        const Tensor& qw = pw.weight;
        const double* ws = pw.weight_scale.data<double>();
        double sx = prog_.tensors.at(t).scale;
        int64_t N = qw.dim(0), K = qw.numel() / N;
        int64_t cg = conv ? qw.dim(1) : K, ks = conv ? K / cg : 1, mg = conv ? N / (static_cast<int64_t>(sums[t].size()) / cg) : N;
        Tensor bias = pw.bias.clone();
        fx::Range acc = fx::range_of(pw.wide ? DType::Int64 : DType::Int32);
        for (int64_t c = 0; c < N; ++c) {
          double shift = 0;
          for (int64_t k = 0; k < K; ++k) {
            int64_t in_ch = conv ? (c / mg) * cg + k / ks : k;
            double wq = qw.data<int16_t>()[c * K + k] * ws[c];
            double wf = normalized_weight(op, w, c, k, N, K);
            shift += (wq - wf) * sums[t][static_cast<size_t>(in_ch)] / counts[t];
          }
          bias.data<int64_t>()[c] = fx::sat(bias.data<int64_t>()[c] - static_cast<int64_t>(fx::round_half_up(shift / (sx * ws[c]))), acc);
        }
        pw.bias = bias;
        ++corrected;
      }
    }
    rewrites_.push_back(cat("bias_correction: corrected the biases of ", corrected, " layer(s)"));
    rewrite_entries_.push_back({{"pass", "bias_correction"}, {"detail", rewrites_.back()}, {"nodes", json::array()}});
  }

  // W[c][k] of the float weights in the layout the op's integer weights use.
  static double normalized_weight(const QOp& op, const Tensor& w, int64_t c, int64_t k, int64_t N, int64_t K) {
    if (op.node.op_type == "Conv") return w.get_f64(c * K + k);
    if (op.node.op_type == "Gemm") {
      double alpha = op.node.attr_float("alpha", 1.0f);
      return alpha * w.get_f64(op.node.attr_int("transB", 0) ? c * K + k : k * N + c);
    }
    return w.get_f64(k * N + c);  // MatMul B is K x N
  }

  // QAT: a Clip/Relu6 range is the range of the tensor it bounds; a graph input read only by
  // such a Clip takes its range (docs/arithmetic.md §2.3).
  void collect_qat_ranges() {
    for (const auto& n : g_.nodes) {
      double lo, hi;
      if (n.op_type != "Clip" || !clip_bounds(g_, n, &lo, &hi) || !std::isfinite(lo) || !std::isfinite(hi)) continue;
      qat_ranges_[n.outputs[0]] = {lo, hi};
      for (const auto& in : g_.inputs)
        if (in.name == n.inputs[0] && match::single_consumer(g_, in.name) == &n) qat_ranges_[in.name] = {lo, hi};
    }
  }

  // §2.7 Fused intermediates. A tensor is produced and read inside one fused kernel, so it never
  // reaches memory, when its producer is a Conv/Gemm/MatMul with constant weights (with its
  // fused Relu/Clip) or an elementwise op, and every reader is an elementwise op (Add, Sub, Mul,
  // Div or a table), all 8-bit layers on the accelerator. Such tensors keep 16 bits: x + r(x^2 - x)
  // evaluated step by step in registers, a Conv's result fed to its Tanh, two Convs' partial sums
  // added. A tensor handed to a float CPU op keeps 16 bits too: the CPU dequantizes it at once,
  // and an 8-bit handoff would add a rounding float never has. Tensors that cross memory
  // between accelerator layers (read by a Conv, Concat, pool, reshape...) stay 8-bit.
  void find_fused_intermediates() {
    std::map<std::string, std::vector<const Node*>> readers;
    for (const auto& n : g_.nodes)
      for (const auto& in : n.inputs)
        if (!in.empty()) readers[in].push_back(&n);
    auto producers = g_.producers();
    auto on_acc8 = [&](const Node& n) { return n.domain.empty() && layer_allowed(n) && layer_bits(n) == 8; };
    auto elementwise = [&](const Node& n) {
      bool binary = (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div") &&
                    n.inputs.size() == 2;
      return on_acc8(n) && (binary || kLutOps.count(n.op_type));
    };
    auto weighted = [&](const Node& n) {
      bool mm = n.op_type == "Conv" || n.op_type == "ConvTranspose" || n.op_type == "Gemm" || n.op_type == "MatMul";
      return on_acc8(n) && mm && n.inputs.size() >= 2 && g_.initializers.count(n.inputs[1]);
    };
    for (const auto& [t, index] : producers) {
      // An imported QDQ model's own encodings win (§2.6).
      if (g_.is_graph_output(t) || !is_float_activation(t) || qdq_.activations.count(t)) continue;
      auto r = readers.find(t);
      if (r == readers.end()) continue;
      const Node* p = &g_.nodes[index];
      const Node* src = p;
      if ((p->op_type == "Relu" || p->op_type == "Clip") && producers.count(p->inputs[0]) &&
          match::single_consumer(g_, p->inputs[0]) == p)
        src = &g_.nodes[producers.at(p->inputs[0])];  // a Relu/Clip the Conv fuses
      if (!weighted(*src) && !elementwise(*p)) continue;
      if (std::all_of(r->second.begin(), r->second.end(), [&](const Node* c) { return elementwise(*c) || !layer_allowed(*c); }))
        fused_intermediates_.insert(t);
    }
  }

  // The width a layer's output is stored at: the layer's, or 16 bits for a fused intermediate.
  int out_bits(const QOp& op, const std::string& out) const {
    return op.bits == 8 && fused_intermediates_.count(out) ? 16 : op.bits;
  }

  int layer_bits(const Node& n) const {
    if (layer_matches_any(opts_.bits16, n)) return 16;
    if (opts_.bits == 16 && layer_matches_any(opts_.bits8, n)) return 8;
    return opts_.bits;
  }
  bool params16(const Node& n) const {
    return layer_matches_any(opts_.params16, n) || layer_bits(n) == 16;
  }

  // Quantization of a float tensor produced at `bits`, from QAT range or calibration.
  QParams activation_qparams(const std::string& t, int bits) {
    QParams q;
    if (opts_.bits == 32) return q;
    auto qd = qdq_.activations.find(t);
    if (qd != qdq_.activations.end() && static_cast<int>(dtype_size(qd->second.type)) * 8 == bits)
      return QParams{qd->second.type, qd->second.scale, qd->second.zero_point};  // §2.6: the model's own
    double lo, hi;
    auto r = qat_ranges_.find(t);
    if (r != qat_ranges_.end()) {
      lo = r->second.first;
      hi = r->second.second;
    } else {
      auto s = stats_.find(t);
      FP_CHECK(s != stats_.end() && s->second.seen(), "tensor '", t,
               "' has no range: no calibration sample reached it", opts_.qat ? " and no Clip bounds it" : "",
               qdq_.activations.empty() ? "" : " and no QuantizeLinear/DequantizeLinear pair sets it");
      lo = s->second.lo;
      hi = s->second.hi;
    }
    bool nonneg = nonneg_.count(t) || lo >= 0;
    q.type = code_type(bits, nonneg);
    // (7a) A network input whose calibration values all lie on a grid that fits the codes is
    // quantized losslessly on that grid (an 8-bit image / 255 keeps its exact pixel values).
    auto st = stats_.find(t);
    if (r == qat_ranges_.end() && !pow2_ && st != stats_.end() && st->second.grid_tracked) {
      fx::Range cr = fx::range_of(q.type);
      for (size_t g = 0; g < kInputGrids.size(); ++g)
        if (st->second.on_grid[g] && lo / kInputGrids[g] >= cr.lo - 1e-6 && hi / kInputGrids[g] <= cr.hi + 1e-6) {
          q.scale = kInputGrids[g];
          return q;
        }
    }
    double range = std::max(std::abs(lo), std::abs(hi));
    auto h = hist_.find(t);
    // 16-bit tensors have resolution to spare: clipping outliers only costs accuracy there.
    // Graph outputs and outputs of bounded functions keep their full range: clipping them only
    // distorts what the user reads (a probability clipped at 0.15 is no probability).
    bool clip = r == qat_ranges_.end() && h != hist_.end() && bits == 8 && !g_.is_graph_output(t) && !bounded_.count(t);
    if (clip) range = std::min(range, h->second.threshold(opts_.calib_method, fx::range_of(q.type).hi));
    q.scale = activation_scale(range, q.type, pow2_);
    // (8a) A lopsided signed range ([-0.2, 6] after a HardSwish) wastes most negative codes:
    // uint8 with a zero point, when that makes the step at least 1.25x finer.
    if (opts_.asymmetric && bits == 8 && !nonneg && !pow2_ && r == qat_ranges_.end() && lo < 0) {
      double T = clip ? h->second.threshold(opts_.calib_method, 255) : std::numeric_limits<double>::infinity();
      // The |x| threshold clips either side; a non-positive tensor keeps 0 in range (z = 255).
      double lo_c = std::max(lo, -T), hi_c = std::max(std::min(hi, T), 0.0);
      double s_asym = (hi_c - lo_c) / 255.0;
      if (s_asym > 0 && s_asym * 1.25 < q.scale) {
        q.type = DType::UInt8;
        q.scale = s_asym;
        q.zero_point = fx::sat(static_cast<int64_t>(fx::round_half_up(-lo_c / s_asym)), fx::range_of(DType::UInt8));
        // (8b) The low end on the grid: a lopsided range's minimum is often a floor many values
        // sit on (HardSwish's 0 plateau after an affine: 17-33% of PaddleOCR's values), and off
        // the grid it becomes one constant error the next Conv sums coherently. With k whole
        // steps below zero, s = -lo / k puts it on code 0 exactly, when that costs <= 1.25x step.
        double k = std::floor(-lo_c / s_asym);
        if (k >= 1 && -lo_c / k <= 1.25 * s_asym) {
          q.scale = -lo_c / k;
          q.zero_point = static_cast<int64_t>(k);
        }
      }
    }
    return q;
  }

  bool is_graph_input(const std::string& t) const {
    for (const auto& in : g_.inputs)
      if (in.name == t) return true;
    return false;
  }

  bool is_float_activation(const std::string& t) const {
    const ValueInfo* vi = g_.info(t);
    return !vi || vi->dtype == DType::Float32 || vi->dtype == DType::Undefined;
  }

  // Sets the quantization of tensor t (once).
  void set_q(const std::string& t, QParams q) { prog_.tensors[t] = q; }
  QParams q_of(const std::string& t) const {
    auto it = prog_.tensors.find(t);
    return it == prog_.tensors.end() ? QParams{} : it->second;
  }

  void plan() {
    // Graph inputs: quantized at the default width.
    for (const auto& in : g_.inputs) {
      if (in.dtype != DType::Float32) continue;
      set_q(in.name, activation_qparams(in.name, opts_.bits));
    }
    for (const auto& n : g_.nodes) {
      if (consumed_.count(n.name)) continue;
      QOp op;
      op.node = n;
      op.bits = opts_.bits == 32 ? 32 : layer_bits(n);
      if (opts_.bits == 32) {
        op.params = params::Float{};
        op.reason = "float reference (--bits 32)";
      } else if (!layer_allowed(n)) {
        to_float(op, part_.cpu_reason.at(n.name));
      } else {
        choose_kind(op);
      }
      if (op.is<params::Float>()) plan_float(op);
      track_nonnegative(op);
      prog_.ops.push_back(std::move(op));
    }
    for (const auto& [name, t] : g_.initializers) prog_.float_constants[name] = t;
  }

  bool layer_allowed(const Node& n) const { return part_.on_accelerator(n.name); }

  // The artifact keeps only the constants some op still reads (float fallback ops, shape
  // operands of data movement, graph outputs): an integer op's weights live in its prepared
  // constants, so their float originals would only double the file.
  void drop_unread_constants() {
    std::set<std::string> read;
    for (const auto& op : prog_.ops) read.insert(op.node.inputs.begin(), op.node.inputs.end());
    for (auto it = prog_.float_constants.begin(); it != prog_.float_constants.end();)
      it = read.count(it->first) || g_.is_graph_output(it->first) ? std::next(it) : prog_.float_constants.erase(it);
  }

  bool all_inputs_quantized(const Node& n, size_t count) const {
    for (size_t i = 0; i < std::min(count, n.inputs.size()); ++i)
      if (n.inputs[i].empty() || q_of(n.inputs[i]).is_float()) return false;
    return true;
  }

  void choose_kind(QOp& op) {
    const Node& n = op.node;
    const std::string& t = n.op_type;
    if ((t == "Conv" || t == "ConvTranspose" || t == "Gemm" || t == "MatMul") && prepare_matmul_like(op)) return;
    if (t == "MatMul" && prepare_matmul2(op)) return;
    if (t == "Softmax" && prepare_softmax(op)) return;
    if (t == "LayerNormalization" && prepare_layernorm(op)) return;
    if (t == "InstanceNormalization" && prepare_instancenorm(op)) return;
    if ((t == "Add" || t == "Sub" || t == "Mul" || t == "Div") && prepare_binary(op)) return;
    if ((t == "ReduceMean" || t == "ReduceSum") && prepare_reduce(op)) return;
    if (t == "PRelu" && prepare_prelu(op)) return;
    if ((t == "Resize" || t == "Upsample") && is_linear_resize(n) && all_inputs_quantized(n, 1)) {
      // (34): the output is re-calibrated (interpolation stays inside the input's range).
      if (nonneg_.count(n.inputs[0])) nonneg_.insert(n.outputs[0]);
      QParams qy = activation_qparams(n.outputs[0], op.bits);
      set_q(n.outputs[0], qy);
      params::ResizeLinear r;
      fx::Multiplier mu = fx::make_multiplier(q_of(n.inputs[0]).scale / qy.scale, false);
      r.m = mu.m;
      r.n = mu.n;
      set_clamp(r, qy);  // the full code range
      op.params = r;
      return;
    }
    if (t == "Concat" && prepare_concat(op)) return;
    if ((t == "AveragePool" || t == "GlobalAveragePool") && prepare_avgpool(op)) return;
    if (t == "GlobalMaxPool" && all_inputs_quantized(n, 1)) {
      op.params = params::GlobalMaxPool{};
      set_q(n.outputs[0], q_of(n.inputs[0]));
      return;
    }
    if ((kMoveOps.count(t) || ((t == "Resize" || t == "Upsample") && n.attr_string("mode", "nearest") == "nearest") ||
         (t == "Pad" && pad_is_movable(n))) &&
        all_inputs_quantized(n, 1)) {
      op.params = params::Move{};
      for (const auto& o : n.outputs)
        if (!o.empty()) set_q(o, q_of(n.inputs[0]));
      return;
    }
    if (kLutOps.count(t) && prepare_lut(op)) return;
    if (t == "Pow" && prepare_lut(op)) return;
    // The capability table said yes, but an operand has no quantization (a tensor calibration
    // never reached, or an operand a CPU node left in float).
    to_float(op, "unsupported attribute: an operand has no fixed-point encoding (not reached by calibration?)");
  }

  static bool is_linear_resize(const Node& n) {
    std::string m = n.attr_string("mode", "nearest");
    return (m == "linear" || m == "bilinear" || m == "trilinear") &&
           n.attr_string("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize";
  }

  bool pad_is_movable(const Node& n) const {
    std::string mode = n.attr_string("mode", "constant");
    if (mode != "constant") return true;
    double v = n.opset < 11 ? n.attr_float("value", 0) : 0.0;
    if (n.opset >= 11 && n.inputs.size() > 2 && !n.inputs[2].empty()) {
      auto it = g_.initializers.find(n.inputs[2]);
      if (it == g_.initializers.end()) return false;
      v = it->second.numel() ? it->second.get_f64(0) : 0.0;
    }
    return v == 0.0 && q_of(n.inputs[0]).zero_point == 0;  // 0 is code 0 only when z = 0
  }

  void to_float(QOp& op, const std::string& why) {
    op.params = params::Float{};
    op.reason = why;
  }

  // Whether a node the accelerator runs reads t (then a CPU result must be quantized).
  bool read_by_accelerator(const std::string& t) const {
    for (const auto& n : g_.nodes)
      if (layer_allowed(n) && std::find(n.inputs.begin(), n.inputs.end(), t) != n.inputs.end()) return true;
    return false;
  }

  void plan_float(QOp& op) {
    // Outputs of a float fallback op are quantized at the op's width so integer consumers work.
    for (const auto& o : op.node.outputs) {
      if (o.empty()) continue;
      if (opts_.bits == 32 || !is_float_activation(o) || !read_by_accelerator(o)) {
        set_q(o, QParams{});
        continue;
      }
      auto s = stats_.find(o);
      if ((s == stats_.end() || !s->second.seen()) && !qat_ranges_.count(o)) {
        set_q(o, QParams{});  // never reached during calibration (e.g. shape tensors): stays float
        continue;
      }
      set_q(o, activation_qparams(o, op.bits == 32 ? 8 : op.bits));
    }
  }

  // Fuses a following Relu/Clip into op when it is the only consumer; returns the output tensor.
  std::string fuse_activation(QOp& op, double* lo, double* hi) {
    *lo = -std::numeric_limits<double>::infinity();
    *hi = std::numeric_limits<double>::infinity();
    std::string out = op.node.outputs[0];
    if (g_.is_graph_output(out)) return out;
    const Node* act = match::single_consumer(g_, out);
    if (!act || (act->op_type != "Relu" && act->op_type != "Clip") || act->inputs[0] != out || !layer_allowed(*act)) return out;
    double a, b;
    if (!clip_bounds(g_, *act, &a, &b)) return out;
    *lo = a;
    *hi = b;
    consumed_.insert(act->name);
    op.fused.push_back(act->name);
    op.node.outputs[0] = act->outputs[0];
    return act->outputs[0];
  }

  // MatMul(x, W) + c with a constant c of one value per output column (shape [N] or [1, .., N]):
  // c becomes the op's bias, as in Gemm (exporters split Linear layers on 3-D inputs this way).
  const Tensor* fuse_bias_add(QOp& op, int64_t N) {
    std::string out = op.node.outputs[0];
    if (g_.is_graph_output(out)) return nullptr;
    const Node* add = match::single_consumer(g_, out);
    if (!add || add->op_type != "Add" || !add->domain.empty() || add->inputs.size() != 2 || !layer_allowed(*add)) return nullptr;
    const std::string& c = add->inputs[0] == out ? add->inputs[1] : add->inputs[0];
    const Tensor* t = match::constant(g_, c);
    if (!t || t->dtype() != DType::Float32 || t->numel() != N || t->rank() < 1 || t->dim(-1) != N) return nullptr;
    const ValueInfo* vy = g_.info(out);
    if (!vy || !vy->shape || static_cast<int64_t>(vy->shape->size()) < t->rank()) return nullptr;  // c must not add dims
    consumed_.insert(add->name);
    op.fused.push_back(add->name);
    op.node.outputs[0] = add->outputs[0];
    return t;
  }

  // [lo, hi] of output codes with a fused activation (docs/arithmetic.md §5.1).
  void set_clamp(params::Clamp& op, const QParams& qy, double lo = -std::numeric_limits<double>::infinity(),
                 double hi = std::numeric_limits<double>::infinity()) {
    fx::Range r = fx::range_of(qy.type);
    int64_t qlo = r.lo, qhi = r.hi;
    if (std::isfinite(lo)) qlo = std::max(qlo, static_cast<int64_t>(fx::round_half_up(lo / qy.scale)) + qy.zero_point);
    if (std::isfinite(hi)) qhi = std::min(qhi, static_cast<int64_t>(fx::round_half_up(hi / qy.scale)) + qy.zero_point);
    op.lo = qlo;
    op.hi = qhi;
  }

  // §2.6: the scale a QDQ model gave output channel c of n's weights, when its width is wt.
  std::optional<double> qdq_weight_scale(const Node& n, int64_t c, int64_t N, DType wt) const {
    auto it = qdq_.weights.find(n.inputs[1]);
    if (it == qdq_.weights.end() || dtype_size(it->second.type) != dtype_size(wt)) return std::nullopt;
    const auto& s = it->second.scales;
    if (s.size() == 1) return s[0];
    // Per channel: the axis holding the output channels (Conv: 0; MatMul [K, N]: 1; Gemm: by transB).
    int64_t out_axis = n.op_type == "Conv" ? 0 : n.op_type == "Gemm" && n.attr_int("transB", 0) ? 0 : 1;
    if (n.op_type == "ConvTranspose" || it->second.axis != out_axis || static_cast<int64_t>(s.size()) != N) return std::nullopt;
    return s[static_cast<size_t>(c)];
  }

  // Conv / Gemm / MatMul with constant weights: (9)-(15).
  bool prepare_matmul_like(QOp& op) {
    const Node& n = op.node;
    if (!all_inputs_quantized(n, 1) || n.inputs.size() < 2 || !g_.initializers.count(n.inputs[1])) return false;
    const Tensor& w = g_.initializers.at(n.inputs[1]);
    if (w.dtype() != DType::Float32) return false;
    const Tensor* b = n.inputs.size() > 2 && !n.inputs[2].empty() && g_.initializers.count(n.inputs[2])
                          ? &g_.initializers.at(n.inputs[2]) : nullptr;
    if (n.inputs.size() > 2 && !n.inputs[2].empty() && !b) return false;
    // Normalize to W[N][K] (per output channel rows) and bias[N].
    int64_t N, K;
    Tensor wn;
    double alpha = 1.0, beta = 1.0;
    if (n.op_type == "Conv") {
      N = w.dim(0);
      K = w.numel() / N;
      wn = w;
    } else if (n.op_type == "ConvTranspose") {
      // W[C, M/g, k...] -> one row per output channel m: W'[m][(c - g cg) k_size + k] (22).
      if (w.rank() < 3) return false;
      int64_t group = n.attr_int("group", 1), C = w.dim(0), mg = w.dim(1), ks = w.numel() / (C * mg), cg = C / group;
      N = mg * group;
      K = cg * ks;
      wn = Tensor(DType::Float32, {N, K});
      for (int64_t m = 0; m < N; ++m)
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t k = 0; k < ks; ++k)
            wn.data<float>()[m * K + ci * ks + k] = w.data<float>()[(((m / mg) * cg + ci) * mg + m % mg) * ks + k];
      if (b && b->numel() != N) return false;
    } else if (n.op_type == "Gemm") {
      if (n.attr_int("transA", 0) || w.rank() != 2) return false;
      alpha = n.attr_float("alpha", 1.0f);
      beta = n.attr_float("beta", 1.0f);
      bool tb = n.attr_int("transB", 0) != 0;
      N = tb ? w.dim(0) : w.dim(1);
      K = tb ? w.dim(1) : w.dim(0);
      wn = Tensor(DType::Float32, {N, K});
      for (int64_t i = 0; i < N; ++i)
        for (int64_t k = 0; k < K; ++k) wn.data<float>()[i * K + k] = static_cast<float>(alpha * w.get_f64(tb ? i * K + k : k * N + i));
      if (b && b->numel() != N && b->numel() != 1) return false;
    } else {  // MatMul with constant 2-D B
      if (w.rank() != 2) return false;
      K = w.dim(0);
      N = w.dim(1);
      wn = Tensor(DType::Float32, {N, K});
      for (int64_t i = 0; i < N; ++i)
        for (int64_t k = 0; k < K; ++k) wn.data<float>()[i * K + k] = w.data<float>()[k * N + i];
    }
    if (n.op_type == "MatMul" && !b) b = fuse_bias_add(op, N);
    QParams qx = q_of(n.inputs[0]);
    double lo, hi;
    std::string out = fuse_activation(op, &lo, &hi);
    if (std::isfinite(lo) && lo >= 0) nonneg_.insert(out);  // fused Relu/Clip >= 0: unsigned output
    QParams qy = activation_qparams(out, out_bits(op, out));
    set_q(out, qy);
    DType wt = params16(n) ? DType::Int16 : DType::Int8;
    bool wide = op.bits == 16 || wt == DType::Int16 || qx.bits() == 16;
    Tensor qw(DType::Int16, wn.shape()), bias(DType::Int64, {N}), mult(DType::Int64, {N}), shift(DType::Int64, {N});
    Tensor wscale(DType::Float64, {N});
    int64_t max_product = (std::max(std::abs(fx::range_of(qx.type).lo), fx::range_of(qx.type).hi)) * (fx::range_of(wt).hi + 1);
    int64_t clipped_bias = 0;
    for (int64_t c = 0; c < N; ++c) {
      double amax = 0;
      for (int64_t k = 0; k < K; ++k) amax = std::max(amax, std::abs(static_cast<double>(wn.data<float>()[c * K + k])));
      double bv = b ? beta * b->get_f64(b->numel() == 1 ? 0 : c) : 0.0;
      std::optional<double> fixed_sw = qdq_weight_scale(n, c, N, wt);
      double sw = fixed_sw.value_or(weight_scale(amax, wt, pow2_));
      // §4: the bias code (11) must fit the int64 accumulator: s_w >= |b| / (2^62 s_x). Where
      // that binds (a tiny input scale, a channel with near-zero weights and a real bias), the
      // weights' contribution is below 2^-55 of the bias, and coarser weight codes lose nothing.
      double sw_floor = std::abs(bv) / (0x1p62 * qx.scale) * (1 + 1e-9);
      if (!fixed_sw && sw < sw_floor) sw = pow2_ ? std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(sw_floor)))) : sw_floor;
      wscale.data<double>()[c] = sw;
      for (int64_t k = 0; k < K; ++k)
        qw.data<int16_t>()[c * K + k] = static_cast<int16_t>(fx::quantize(wn.data<float>()[c * K + k], sw, 0, fx::range_of(wt)));
      // (11) in the int64 range first: a tiny input scale makes a large bias code, which the
      // accumulator must then hold exactly (it widens below) rather than clip.
      int64_t qb = fx::quantize(bv, qx.scale * sw, 0, fx::range_of(DType::Int64));
      bias.data<int64_t>()[c] = qb;
      if (std::abs(bv / (qx.scale * sw)) >= 0x1p62) ++clipped_bias;
      // §4: int32 accumulation must not overflow.
      // (in 128 bits: a clipped bias code is +-2^63, beyond int64's sums and std::abs)
      __int128 reach_acc = static_cast<__int128>(K) * max_product + (qb < 0 ? -static_cast<__int128>(qb) : qb);
      if (!wide && reach_acc >= (int64_t{1} << 31)) wide = true;
    }
    // (12) with n bounded by the product's width (§4): 128-bit products keep tiny ratios exact.
    int max_shift = wide ? fx::kMaxShift128 : fx::kMaxShift64;
    int64_t weak_multipliers = 0;
    for (int64_t c = 0; c < N; ++c) {
      double M = qx.scale * wscale.data<double>()[c] / qy.scale;
      fx::Multiplier mu = fx::make_multiplier(M, pow2_ && is_pow2(M), max_shift);
      mult.data<int64_t>()[c] = mu.m;
      shift.data<int64_t>()[c] = mu.n;
      // A coarse multiplier matters only where the channel's accumulator can reach an output step.
      double reach = M * (static_cast<double>(K * max_product) + std::abs(static_cast<double>(bias.data<int64_t>()[c])));
      if (!pow2_ && mu.m < (int64_t{1} << 15) && reach >= 1.0) ++weak_multipliers;
    }
    if (clipped_bias)
      warn_precision(n.name, cat(clipped_bias, " of ", N, " bias code(s) exceed the int64 accumulator (input scale ",
                                 qx.scale, "): those channels' biases are clipped"));
    if (weak_multipliers)
      warn_precision(n.name, cat(weak_multipliers, " of ", N, " requantization multiplier(s) keep fewer than 15 significant bits",
                                 " (input scale ", qx.scale, ", output scale ", qy.scale, ")"));
    params::Weighted pw;
    pw.weight = qw;
    pw.bias = bias;
    pw.mult = mult;
    pw.shift = shift;
    pw.weight_scale = wscale;
    pw.wide = wide;
    pw.weight_bits = wt == DType::Int16 ? 16 : 8;
    set_clamp(pw, qy, lo, hi);
    if (n.op_type == "Conv") {
      op.params = params::Conv{pw};
    } else if (n.op_type == "ConvTranspose") {
      params::ConvTranspose ct;
      static_cast<params::Weighted&>(ct) = pw;
      ct.mg = w.dim(1);
      ct.kernel_shape = Tensor::from_i64(Shape(w.shape().begin() + 2, w.shape().end()), {w.rank() - 2});
      op.params = ct;
    } else {
      op.params = params::MatMul{pw};
    }
    original_weight_[n.name] = n.inputs[1];
    op.node.inputs.resize(1);  // weights and bias are prepared constants now
    return true;
  }

  static bool is_pow2(double v) {
    int e;
    return std::frexp(v, &e) == 0.5;
  }

  QParams const_qparams(const std::string& name, int bits) {
    const Tensor& t = g_.initializers.at(name);
    double amax = 0, lo = 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      amax = std::max(amax, std::abs(t.get_f64(i)));
      lo = std::min(lo, t.get_f64(i));
    }
    QParams q;
    q.type = code_type(bits, lo >= 0);
    q.scale = activation_scale(amax, q.type, pow2_);
    return q;
  }

  // Binary operands that are constants are quantized as tensors of their own.
  bool quantize_const_inputs(QOp& op, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      const std::string& in = op.node.inputs[i];
      if (!q_of(in).is_float()) continue;
      if (!g_.initializers.count(in) || g_.initializers.at(in).dtype() != DType::Float32) return false;
      QParams q = const_qparams(in, op.bits);
      std::string cname = cat(op.node.name, "/quantized_", i);
      Tensor codes(q.type, g_.initializers.at(in).shape());
      for (int64_t k = 0; k < codes.numel(); ++k)
        codes.set_f64(k, static_cast<double>(fx::quantize(g_.initializers.at(in).get_f64(k), q.scale, 0, fx::range_of(q.type))));
      op.const_inputs[i] = codes;
      set_q(cname, q);
      op.node.inputs[i] = cname;
    }
    return true;
  }

  // Add/Sub (16)-(17), Mul (18).
  bool prepare_binary(QOp& op) {
    const Node& n = op.node;
    if (n.inputs.size() != 2) return false;
    for (const auto& in : n.inputs)
      if (q_of(in).is_float() && !g_.initializers.count(in)) return false;
    if (!quantize_const_inputs(op, 2)) return false;
    QParams qa = q_of(op.node.inputs[0]), qb = q_of(op.node.inputs[1]);
    double lo, hi;
    std::string out = fuse_activation(op, &lo, &hi);
    if (std::isfinite(lo) && lo >= 0) nonneg_.insert(out);
    if ((n.op_type == "Mul" || n.op_type == "Div") && nonneg_.count(n.inputs[0]) && nonneg_.count(n.inputs[1]))
      nonneg_.insert(out);
    if (n.op_type == "Add" && nonneg_.count(n.inputs[0]) && nonneg_.count(n.inputs[1])) nonneg_.insert(out);
    QParams qy = activation_qparams(out, out_bits(op, out));
    set_q(out, qy);
    bool wide = op.bits == 16 || qa.bits() == 16 || qb.bits() == 16 || qy.bits() == 16;
    if (n.op_type == "Mul" || n.op_type == "Div") {
      double M = n.op_type == "Mul" ? qa.scale * qb.scale / qy.scale : qa.scale / (qb.scale * qy.scale);  // (18), (32)
      fx::Multiplier mu = fx::make_multiplier(M, pow2_ && is_pow2(M));
      params::Scaled sp;
      sp.m = mu.m;
      sp.n = mu.n;
      sp.wide = wide;
      set_clamp(sp, qy, lo, hi);
      if (n.op_type == "Mul") op.params = params::Mul{sp};
      else op.params = params::Div{sp};
    } else {
      params::AddSub a;
      // (17)'s bound grows with |q_a|, |q_b|, not with the output width: 8-bit operands need L = 20.
      int L = op.bits == 16 || qa.bits() == 16 || qb.bits() == 16 ? 36 : 20;
      a.L = L;
      a.A = static_cast<int64_t>(fx::round_half_up(std::ldexp(qa.scale / qy.scale, L)));
      a.B = static_cast<int64_t>(fx::round_half_up(std::ldexp(qb.scale / qy.scale, L)));
      a.sign = n.op_type == "Sub" ? -1 : 1;
      a.wide = wide;
      set_clamp(a, qy, lo, hi);
      op.params = a;
    }
    return true;
  }

  bool prepare_concat(QOp& op) {
    const Node& n = op.node;
    for (const auto& in : n.inputs)
      if (q_of(in).is_float() && !g_.initializers.count(in)) return false;
    if (!quantize_const_inputs(op, n.inputs.size())) return false;
    // Output range: the largest real range of the inputs (no input saturates); width: the op's.
    bool nonneg = true;
    double range = 0;
    for (const auto& in : op.node.inputs) {
      QParams q = q_of(in);
      auto [lo, hi] = real_range(q);
      nonneg = nonneg && lo >= 0;
      // A symmetric code's extra negative step (-128) is not part of its calibrated range.
      range = std::max({range, hi, q.zero_point == 0 ? 0.0 : -lo});
    }
    QParams qy;
    qy.type = code_type(op.bits, nonneg);
    qy.scale = activation_scale(range, qy.type, pow2_);
    if (nonneg) nonneg_.insert(n.outputs[0]);
    set_q(n.outputs[0], qy);
    Tensor mult(DType::Int64, {static_cast<int64_t>(op.node.inputs.size())});
    Tensor shift(DType::Int64, mult.shape());  // (Tensor copies share storage)
    for (size_t i = 0; i < op.node.inputs.size(); ++i) {
      double M = q_of(op.node.inputs[i]).scale / qy.scale;
      fx::Multiplier mu = fx::make_multiplier(M, pow2_ && is_pow2(M));
      mult.data<int64_t>()[i] = mu.m;
      shift.data<int64_t>()[i] = mu.n;
    }
    op.params = params::Concat{mult, shift};
    return true;
  }

  // PRelu with a constant slope (33): one multiplier for x >= 0, one per slope element below.
  bool prepare_prelu(QOp& op) {
    const Node& n = op.node;
    if (!all_inputs_quantized(n, 1) || n.inputs.size() != 2 || !g_.initializers.count(n.inputs[1])) return false;
    const Tensor& slope = g_.initializers.at(n.inputs[1]);
    QParams qx = q_of(n.inputs[0]);
    QParams qy = activation_qparams(n.outputs[0], op.bits);
    set_q(n.outputs[0], qy);
    // The slope's shape, right-aligned against x's rank (unidirectional broadcast).
    Tensor mult(DType::Int64, slope.shape()), shift(DType::Int64, slope.shape()), sign(DType::Int64, slope.shape());
    for (int64_t k = 0; k < slope.numel(); ++k) {
      double M = slope.get_f64(k) * qx.scale / qy.scale;
      fx::Multiplier mu = M == 0 ? fx::Multiplier{0, 0} : fx::make_multiplier(std::abs(M), false);
      mult.data<int64_t>()[k] = mu.m;
      shift.data<int64_t>()[k] = mu.n;
      sign.data<int64_t>()[k] = M < 0 ? -1 : 1;
    }
    fx::Multiplier pos = fx::make_multiplier(qx.scale / qy.scale, pow2_ && is_pow2(qx.scale / qy.scale));
    params::PRelu pr;
    pr.m = pos.m;
    pr.n = pos.n;
    pr.wide = op.bits == 16 || qx.bits() == 16;
    pr.neg_mult = mult;
    pr.neg_shift = shift;
    pr.neg_sign = sign;
    set_clamp(pr, qy);  // the full code range
    op.params = pr;
    op.node.inputs.resize(1);
    return true;
  }

  // ReduceSum / ReduceMean (31); the multiplier depends on the reduced count, known at run time.
  bool prepare_reduce(QOp& op) {
    if (!all_inputs_quantized(op.node, 1)) return false;
    QParams qx = q_of(op.node.inputs[0]);
    if (real_range(qx).first >= 0) nonneg_.insert(op.node.outputs[0]);
    QParams qy = activation_qparams(op.node.outputs[0], op.bits);
    set_q(op.node.outputs[0], qy);
    params::Reduce rd;
    rd.mean = op.node.op_type == "ReduceMean";
    set_clamp(rd, qy);  // the full code range
    op.params = rd;
    return true;
  }

  bool prepare_avgpool(QOp& op) {
    if (!all_inputs_quantized(op.node, 1)) return false;
    QParams qx = q_of(op.node.inputs[0]);
    QParams qy = activation_qparams(op.node.outputs[0], op.bits);
    if (real_range(qx).first >= 0) {
      nonneg_.insert(op.node.outputs[0]);
      qy = activation_qparams(op.node.outputs[0], op.bits);
    }
    set_q(op.node.outputs[0], qy);
    op.params = params::AvgPool{op.bits == 16 || qx.bits() == 16};
    return true;
  }

  // MatMul of two activations (21).
  bool prepare_matmul2(QOp& op) {
    const Node& n = op.node;
    if (n.inputs.size() != 2 || !all_inputs_quantized(n, 2)) return false;
    QParams qa = q_of(n.inputs[0]), qb = q_of(n.inputs[1]);
    double lo, hi;
    std::string out = fuse_activation(op, &lo, &hi);
    if (std::isfinite(lo) && lo >= 0) nonneg_.insert(out);
    QParams qy = activation_qparams(out, op.bits);
    set_q(out, qy);
    double M = qa.scale * qb.scale / qy.scale;
    fx::Multiplier mu = fx::make_multiplier(M, pow2_ && is_pow2(M));
    params::MatMul2 mm;
    mm.m = mu.m;
    mm.n = mu.n;
    set_clamp(mm, qy, lo, hi);
    op.params = mm;
    return true;
  }

  // Softmax (23): E[d] = R(2^30 exp(-s_x d)) for d = 0 .. span of the input codes; the output is
  // unsigned with the fixed scale 1/q_max (pow2 mode: 2^-bits), Q = 1/s_y.
  bool prepare_softmax(QOp& op) {
    const Node& n = op.node;
    if (!all_inputs_quantized(n, 1)) return false;
    QParams qx = q_of(n.inputs[0]);
    fx::Range rx = fx::range_of(qx.type);
    QParams qy;
    qy.type = code_type(op.bits, true);
    int64_t Q = pow2_ ? (int64_t{1} << (op.bits == 16 ? 16 : 8)) : fx::range_of(qy.type).hi;
    qy.scale = 1.0 / static_cast<double>(Q);
    nonneg_.insert(n.outputs[0]);
    set_q(n.outputs[0], qy);
    Tensor table(DType::Int32, {rx.hi - rx.lo + 1});
    for (int64_t d = 0; d < table.numel(); ++d)
      table.data<int32_t>()[d] = static_cast<int32_t>(fx::round_half_up(std::ldexp(std::exp(-qx.scale * static_cast<double>(d)), 30)));
    op.params = params::Softmax{table, Q};
    return true;
  }

  // LayerNormalization over the last axis (26)-(30).
  bool prepare_layernorm(QOp& op) {
    const Node& n = op.node;
    if (!all_inputs_quantized(n, 1) || n.inputs.size() < 2) return false;
    int64_t axis = n.attr_int("axis", -1);
    const ValueInfo* vi = g_.info(n.inputs[0]);
    int64_t rank = vi && vi->shape ? static_cast<int64_t>(vi->shape->size()) : -1;
    if (!(axis == -1 || (rank > 0 && axis == rank - 1))) return false;
    const Tensor* gamma = match::constant(g_, n.inputs[1]);
    const Tensor* beta = n.inputs.size() > 2 && !n.inputs[2].empty() ? match::constant(g_, n.inputs[2]) : nullptr;
    if (!gamma || (n.inputs.size() > 2 && !n.inputs[2].empty() && !beta)) return false;
    int64_t per = gamma->numel();
    if (beta && beta->numel() != per && beta->numel() != 1) return false;
    if (beta && beta->numel() != per) per = std::max(per, beta->numel());
    params::LayerNorm ln;
    if (!prepare_normalize(op, gamma, beta, per, &ln)) return false;
    op.params = ln;
    op.node.inputs.resize(1);
    return true;
  }

  // InstanceNormalization (§5.19): (26)-(30) over each (n, c) plane, gamma/beta per channel.
  bool prepare_instancenorm(QOp& op) {
    const Node& n = op.node;
    if (!all_inputs_quantized(n, 1) || n.inputs.size() != 3) return false;
    const Tensor* gamma = match::constant(g_, n.inputs[1]);
    const Tensor* beta = match::constant(g_, n.inputs[2]);
    if (!gamma || !beta || gamma->rank() != 1 || beta->numel() != gamma->numel()) return false;
    params::InstanceNorm in;
    if (!prepare_normalize(op, gamma, beta, gamma->numel(), &in)) return false;
    op.params = in;
    op.node.inputs.resize(1);
    return true;
  }

  // The constants of (26)-(30) for `per` affine indices (gamma/beta of one value broadcast).
  bool prepare_normalize(QOp& op, const Tensor* gamma, const Tensor* beta, int64_t per, params::Normalize* out) {
    const Node& n = op.node;
    QParams qx = q_of(n.inputs[0]);
    QParams qy = activation_qparams(n.outputs[0], op.bits);
    Tensor mult(DType::Int64, {per}), shift(DType::Int64, {per}), sign(DType::Int64, {per}), bq(DType::Int64, {per});
    for (int64_t j = 0; j < per; ++j) {
      double G = gamma->get_f64(gamma->numel() == 1 ? 0 : j) / qy.scale;
      double bv = beta ? beta->get_f64(beta->numel() == 1 ? 0 : j) : 0.0;
      fx::Multiplier mu = G == 0 ? fx::Multiplier{0, 0} : fx::make_multiplier(std::abs(G), false);
      if (mu.n < -30) return false;  // (30) needs n_j + P - 16 >= 0
      mult.data<int64_t>()[j] = mu.m;
      shift.data<int64_t>()[j] = mu.n;
      sign.data<int64_t>()[j] = G < 0 ? -1 : 1;
      bq.data<int64_t>()[j] = static_cast<int64_t>(fx::round_half_up(std::ldexp(bv / qy.scale, 16)));
    }
    double eps = n.attr_float("epsilon", 1e-5f);
    set_q(n.outputs[0], qy);
    *out = params::Normalize{mult, shift, sign, bq,
                             static_cast<int64_t>(fx::round_half_up(std::ldexp(eps / (qx.scale * qx.scale), 16)))};
    return true;
  }

  // (20): a table over every input code.
  bool prepare_lut(QOp& op) {
    const Node& n = op.node;
    if (!all_inputs_quantized(n, 1)) return false;
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (!n.inputs[i].empty() && !g_.initializers.count(n.inputs[i])) return false;
    QParams qx = q_of(n.inputs[0]);
    if (qx.bits() > 16) return false;
    fx::Range rx = fx::range_of(qx.type);
    Tensor x(DType::Float32, {rx.hi - rx.lo + 1});
    for (int64_t q = rx.lo; q <= rx.hi; ++q) x.data<float>()[q - rx.lo] = fx::dequantize(q, qx.scale, qx.zero_point);
    Node fnode = n;
    fnode.outputs.resize(1);
    std::vector<const Tensor*> ins = {&x};
    for (size_t i = 1; i < n.inputs.size(); ++i)
      ins.push_back(n.inputs[i].empty() ? nullptr : &g_.initializers.at(n.inputs[i]));
    Tensor fy = run_node(fnode, ins).at(0);
    std::string out = n.outputs[0];
    bool composed = absorb_scalar_ops(op, &out, &fy);
    if (!composed && kNonNegativeOps.count(n.op_type)) nonneg_.insert(out);
    double lo, hi;
    if (!composed && (n.op_type == "Clip") && clip_bounds(g_, n, &lo, &hi) && lo >= 0) nonneg_.insert(out);
    QParams qy;
    // A QAT Clip keeps its range; a Relu/Clip on the same scale maps codes to themselves.
    qy = activation_qparams(out, out_bits(op, out));
    set_q(out, qy);
    fx::Range ry = fx::range_of(qy.type);
    Tensor table(qy.type, {x.numel()});  // output codes: 64 KB for a 16-bit input and 8-bit output
    for (int64_t i = 0; i < x.numel(); ++i)
      table.set_f64(i, static_cast<double>(fx::quantize(fy.get_f64(i), qy.scale, qy.zero_point, ry)));
    op.params = params::Table{table, rx.lo};
    op.node.inputs.resize(1);
    return true;
  }

  // (20) composes: Add/Sub/Mul/Div by a one-element float constant after a table op becomes part
  // of its function (TAB[q] = R(f'(x) / s_y) + z_y with f' = c ∘ f), one rounding instead of one
  // per op, e.g. PP-LCNet's learnable affine 0.70 * HardSwish(x) + 0.24. Evaluated by the float
  // kernels of the absorbed nodes on the table's float values.
  bool absorb_scalar_ops(QOp& op, std::string* out, Tensor* fy) {
    bool any = false;
    while (!g_.is_graph_output(*out)) {
      const Node* c = match::single_consumer(g_, *out);
      if (!c || !c->domain.empty() || c->inputs.size() != 2 || !layer_allowed(*c) ||
          (c->op_type != "Add" && c->op_type != "Sub" && c->op_type != "Mul" && c->op_type != "Div"))
        break;
      size_t other = c->inputs[0] == *out ? 1 : 0;
      const Tensor* k = match::constant(g_, c->inputs[other]);
      if (c->inputs[1 - other] != *out || !k || k->numel() != 1 || k->dtype() != DType::Float32 || k->rank() > 1) break;
      Node cn = *c;
      std::vector<const Tensor*> ins(2);
      ins[1 - other] = fy;
      ins[other] = k;
      *fy = run_node(cn, ins).at(0);
      consumed_.insert(c->name);
      op.fused.push_back(c->name);
      *out = c->outputs[0];
      op.node.outputs[0] = *out;
      any = true;
    }
    return any;
  }

  void track_nonnegative(const QOp& op) {
    const Node& n = op.node;
    bool composed = op.is<params::Table>() && !op.fused.empty();  // its output is c(f(x)), not f(x)
    if (kNonNegativeOps.count(n.op_type) && !composed)
      for (const auto& o : n.outputs) nonneg_.insert(o);
    if ((kMoveOps.count(n.op_type) || n.op_type == "Resize" || n.op_type == "Upsample" || n.op_type == "Pad") &&
        !n.inputs.empty() && nonneg_.count(n.inputs[0]))
      for (const auto& o : n.outputs) nonneg_.insert(o);
  }

  // Tensors of the imported graph the program never computes, each with the program tensor that
  // stands for it: the output of the op its producer was fused or rewritten into.
  json removed_tensors() const {
    std::map<std::string, std::string> stand_in;  // ONNX node -> program tensor
    for (const auto& op : prog_.ops) {
      if (op.node.outputs.empty()) continue;
      std::string out = op.node.outputs[0];
      stand_in[op.node.name] = out;
      for (const auto& f : op.fused) stand_in[f] = out;
    }
    for (const auto& e : rewrite_entries_) {  // nodes a rewrite merged: the survivor's output
      std::string out;
      for (const auto& n : e["nodes"])
        if (stand_in.count(n.get<std::string>())) out = stand_in[n.get<std::string>()];
      for (const auto& n : e["nodes"])
        if (!out.empty() && !stand_in.count(n.get<std::string>())) stand_in[n.get<std::string>()] = out;
    }
    json r = json::object();
    for (const auto& n : before_rewrites_.nodes)
      for (const auto& t : n.outputs) {
        if (t.empty() || prog_.tensors.count(t) || g_.is_graph_output(t)) continue;
        auto it = stand_in.find(n.name);
        r[t] = {{"node", n.name}, {"op", n.op_type}, {"stand_in", it == stand_in.end() ? json() : json(it->second)}};
      }
    return r;
  }

  CompileResult finish() {
    CompileResult r;
    json rep;
    rep["model"] = prog_.source_model;
    rep["bits"] = prog_.bits;
    rep["scale_mode"] = prog_.scale_mode;
    rep["rounding"] = prog_.rounding;
    rep["calib_method"] = opts_.bits == 32 ? "none"
                          : stats_.empty() ? (opts_.qat ? "qat" : qdq_.activations.empty() ? "none" : "qdq")
                                           : opts_.calib_method;
    rep["qdq_tensors"] = qdq_.activations.size();
    rep["rewrites"] = rewrite_entries_;
    json layers = json::array(), fallback = json::array();
    std::ostringstream txt;
    int n_float = 0;
    for (const auto& op : prog_.ops) {
      json l = {{"name", op.node.name}, {"op", op.node.op_type}, {"kind", std::string(op.kind())}, {"bits", op.bits},
                {"fused", op.fused}};
      json ins = json::array(), outs = json::array();
      for (const auto& in : op.node.inputs) {
        if (in.empty() || prog_.float_constants.count(in)) continue;
        QParams q = q_of(in);
        ins.push_back({{"tensor", in}, {"dtype", dtype_name(q.type)}, {"scale", q.scale}});
      }
      for (const auto& o : op.node.outputs) {
        if (o.empty()) continue;
        QParams q = q_of(o);
        json oj = {{"tensor", o}, {"dtype", dtype_name(q.type)}, {"scale", q.scale}};
        auto s = stats_.find(o);
        if (s != stats_.end() && s->second.seen()) oj["range"] = {s->second.lo, s->second.hi};
        if (const ValueInfo* vi = g_.info(o); vi && vi->shape) oj["shape"] = vi->shape_text();
        outs.push_back(oj);
      }
      l["inputs"] = ins;
      l["outputs"] = outs;
      if (op.is<params::Float>()) {
        l["reason"] = op.reason;
        if (opts_.bits != 32) {
          fallback.push_back({{"name", op.node.name}, {"op", op.node.op_type}, {"reason", op.reason}});
          ++n_float;
        }
      }
      layers.push_back(l);
    }
    rep["layers"] = layers;
    rep["fallback_nodes"] = fallback;
    // Subgraphs of the program as it runs (after fusion): fused nodes belong to their op's group.
    std::vector<std::vector<std::string>> ins, outs, members;
    std::vector<bool> acc;
    for (const auto& op : prog_.ops) {
      ins.push_back(op.node.inputs);
      outs.push_back(op.node.outputs);
      std::vector<std::string> m = {op.node.name};
      m.insert(m.end(), op.fused.begin(), op.fused.end());
      members.push_back(m);
      acc.push_back(!op.is<params::Float>());
    }
    json subgraphs = json::array();
    int n_acc = 0, n_cpu = 0;
    for (const auto& sg : group_subgraphs(ins, outs, acc, members)) {
      subgraphs.push_back({{"id", sg.id}, {"kind", sg.kind}, {"nodes", sg.nodes}});
      (sg.kind == "accelerator" ? n_acc : n_cpu)++;
    }
    int boundary = count_boundary_tensors(ins, outs, acc);
    rep["subgraphs"] = subgraphs;
    rep["removed_tensors"] = removed_tensors();
    // §2.7: which tensors of 8-bit layers stay 16-bit inside fused kernels (only those quantized).
    json fused_wide = json::array();
    for (const auto& t : fused_intermediates_)
      if (prog_.tensors.count(t) && prog_.tensors.at(t).bits() == 16) fused_wide.push_back(t);
    rep["fused_intermediates_16bit"] = fused_wide;
    rep["subgraph_counts"] = {{"accelerator", n_acc}, {"cpu", n_cpu}, {"boundary_tensors", boundary}};
    rep["precision_warnings"] = precision_warnings_;
    rep["calibration_nonfinite"] = {{"input_nan", calib_nonfinite_.inputs.nan}, {"input_inf", calib_nonfinite_.inputs.inf},
                                    {"tensor_nan", calib_nonfinite_.tensors.nan}, {"tensor_inf", calib_nonfinite_.tensors.inf}};
    txt << "fixpoint compile report\n  model: " << prog_.source_model << "\n  bits: " << prog_.bits
        << "   scale mode: " << prog_.scale_mode << "   rounding: half up (docs/arithmetic.md (2))\n  ops: "
        << prog_.ops.size() << " (" << (prog_.ops.size() - n_float) << " fixed point, " << n_float
        << " float on the CPU)\n  subgraphs: " << n_acc << " accelerator, " << n_cpu << " cpu; " << boundary
        << " tensor(s) cross between them\n";
    if (!fused_wide.empty())
      txt << "  " << fused_wide.size()
          << " tensor(s) of 8-bit layers kept at 16 bits inside fused kernels (docs/arithmetic.md 2.7; "
             "--narrow-intermediates stores them at 8)\n";
    if (calib_nonfinite_.inputs.total() + calib_nonfinite_.tensors.total())
      txt << "  calibration met " << calib_nonfinite_.inputs.text() << " in its samples and "
          << calib_nonfinite_.tensors.text() << " in computed tensors; ranges ignore them (docs/arithmetic.md 2.8)\n";
    if (!precision_warnings_.empty()) {
      txt << "\nprecision warnings (the integer result cannot match float here):\n";
      for (const auto& w : precision_warnings_)
        txt << "  " << w["layer"].get<std::string>() << ": " << w["detail"].get<std::string>() << "\n";
    }
    if (n_float) {
      txt << "\nfallback nodes (run on the CPU in float, between dequantize and quantize):\n";
      for (const auto& f : fallback)
        txt << "  " << f["name"].get<std::string>() << " (" << f["op"].get<std::string>() << "): " << f["reason"].get<std::string>() << "\n";
    }
    txt << "\nsubgraphs:\n";
    for (const auto& sg : subgraphs) {
      const auto& nodes = sg["nodes"];
      txt << "  #" << sg["id"].get<int>() << " " << sg["kind"].get<std::string>() << ": " << nodes.size() << " node(s), "
          << nodes.front().get<std::string>() << (nodes.size() > 1 ? " .. " + nodes.back().get<std::string>() : "") << "\n";
    }
    if (!rewrites_.empty()) {
      txt << "\nrewrites:\n";
      for (const auto& w : rewrites_) txt << "  " << w << "\n";
    }
    txt << "\nlayers:\n";
    for (const auto& l : layers) {
      txt << "  " << l["name"].get<std::string>() << "  " << l["op"].get<std::string>() << "  [" << l["kind"].get<std::string>()
          << ", " << l["bits"].get<int>() << "-bit]";
      for (const auto& f : l["fused"]) txt << " +" << f.get<std::string>();
      for (const auto& o : l["outputs"])
        txt << "  -> " << o["tensor"].get<std::string>() << " " << o["dtype"].get<std::string>() << " scale "
            << o["scale"].get<double>();
      txt << "\n";
    }
    r.report = rep;
    r.report_text = txt.str();
    r.program = std::move(prog_);
    return r;
  }
};

}  // namespace

CompileResult compile_model(const std::string& model_path, const CompileOptions& opts, const CalibrationSource* calib) {
  Compiler c(opts);
  return c.run(model_path, calib);
}

}  // namespace fixpoint
