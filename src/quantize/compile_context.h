// What the steps of one compile share (docs/architecture.md, "The compiler"): the graph being
// compiled, the program being built, and what each step leaves for the later ones. Each step is
// a free function over this context in a file of its own (calibration_stats, encoding,
// width_policy, sign_analysis, activation_fusion, qat_ranges, bias_correction, compile_report,
// one prepare file per op kind); compiler.cc runs them in order.
#pragma once
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixpoint/compiler.h"
#include "fixpoint/partition.h"
#include "fixpoint/passes.h"
#include "quantize/calibration_stats.h"
#include "quantize/prepared_cache.h"

namespace fixpoint {

// What the steps leave for the later ones, without the options: a compile's state after the
// compile-time passes and the partition can start several compiles (ModelCompiler) that differ
// only in options those steps do not read.
struct CompileState {
  Graph g;                    // after the compile-time passes
  Graph before_rewrites;      // the imported graph, for the tensors rewrites and fusion removed
  Program prog;               // what the compile makes
  Partition part;             // which nodes the accelerator runs (capability, deny/allow, islands)
  std::vector<ValueInfo> model_inputs;  // as imported: calibration samples may lack their batch dim

  // Calibration (calibration_stats.cc) and the ranges that override it.
  std::map<std::string, Stats> stats;
  std::map<std::string, AbsHistogram> hist;  // second calibration pass (not minmax)
  std::map<std::string, ChannelSums> channels;  // first pass: E[x] per channel (bias correction)
  std::map<std::string, ChannelRanges> channel_ranges;  // first pass: per-channel ranges (channel equalization)
  bool stats_equalized = false;     // stats, hist, channels are in the equalized graph's units
  bool channels_equalized = false;  // g's weights are rescaled (channel_equalization.cc)
  struct {
    NonFinite inputs, tensors;  // §2.8: ranges ignore them, the report counts them
  } calib_nonfinite;
  std::map<std::string, std::pair<double, double>> qat_ranges;  // --qat (qat_ranges.cc)
  QdqParams qdq;  // encodings an imported QDQ model fixes (§2.6)

  // Facts about tensors the steps learn on the way.
  std::set<std::string> nonneg;               // never negative (sign_analysis.cc): unsigned codes
  std::set<std::string> bounded;              // outputs of Softmax/Sigmoid/HardSigmoid/Tanh: never clipped
  std::set<std::string> fused_intermediates;  // §2.7: kept at 16 bits in 8-bit layers (width_policy.cc)
  std::set<std::string> residual_stream;      // §2.7: a transformer's residual stream, 16 bits (width_policy.cc)
  std::set<std::string> consumed;             // nodes fused into an earlier op
  std::map<std::string, std::string> original_weight;  // conv/matmul op -> its float weight initializer

  // For the report (compile_report.cc).
  std::vector<std::string> rewrites;                         // readable lines
  nlohmann::json rewrite_entries = nlohmann::json::array();  // {pass, detail, nodes}
  nlohmann::json precision_warnings = nlohmann::json::array();  // {layer, detail}
  nlohmann::json adaptive_rounding;  // per-layer results (adaptive_rounding.cc); null when it did not run
  std::vector<Node> source_nodes;    // as imported: names a layer list may give (attributes share storage)
  // Shared by the compiles a ModelCompiler starts from this state; null in a plain compile.
  std::shared_ptr<PreparedCache> prepared;
};

struct CompileContext : CompileState {
  explicit CompileContext(const CompileOptions& o) : opts(o), pow2(o.scale_mode == "pow2") {}
  // A compile that goes on from `state` (the steps up to the partition ran with options that
  // agree with o on everything they read).
  CompileContext(const CompileOptions& o, const CompileState& state)
      : CompileState(state), opts(o), pow2(o.scale_mode == "pow2") {}

  const CompileOptions& opts;
  bool pow2;  // --scale-mode pow2

  // The quantization of tensor t (float when it has none yet); set once per tensor.
  QParams q_of(const std::string& t) const {
    auto it = prog.tensors.find(t);
    return it == prog.tensors.end() ? QParams{} : it->second;
  }
  void set_q(const std::string& t, QParams q) { prog.tensors[t] = q; }

  bool layer_allowed(const Node& n) const { return part.on_accelerator(n.name); }

  // The first `count` inputs of n all have integer codes.
  bool all_inputs_quantized(const Node& n, size_t count) const {
    for (size_t i = 0; i < std::min(count, n.inputs.size()); ++i)
      if (n.inputs[i].empty() || q_of(n.inputs[i]).is_float()) return false;
    return true;
  }

  bool is_graph_input(const std::string& t) const {
    for (const auto& in : g.inputs)
      if (in.name == t) return true;
    return false;
  }

  // A layer whose integer arithmetic loses something float keeps: listed in the report (and
  // printed by the CLI), never silent.
  void warn_precision(const std::string& layer, const std::string& detail) {
    precision_warnings.push_back({{"layer", layer}, {"detail", detail}});
  }

  void log_rewrite(const std::string& pass, const std::string& detail, const nlohmann::json& nodes) {
    rewrites.push_back(pass + ": " + detail);
    rewrite_entries.push_back({{"pass", pass}, {"detail", detail}, {"nodes", nodes}});
  }
};

// An op the CPU runs in float, and why.
inline void to_float(QOp& op, const std::string& why) {
  op.params = params::Float{};
  op.reason = why;
}

}  // namespace fixpoint
