// fixpoint: float-vs-fixed comparison per layer (fixpoint compare). For every program op output
// it measures the accumulated error (the fixed-point program end to end) and the local error
// (the same op fed with the float reference's own inputs, quantized at its input scales), so the
// layers that *cause* the error can be told from those that only inherit it.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixpoint/ir.h"
#include "fixpoint/onnx_import.h"
#include "fixpoint/program_runner.h"

namespace fixpoint {

struct LayerError {
  std::string name, op, kind, output;
  int bits = 32;
  double scale = 0, lo = 0, hi = 0;        // output scale; float reference range seen
  double signal = 0, noise = 0, local_noise = 0, dot = 0, got_sq = 0, max_abs = 0, sum_abs = 0;
  // The layer against the float node fed with the same encoded (quantized, dequantized) inputs:
  // its own arithmetic and output rounding, without its inputs' encodings (the producers' fault).
  double own_noise = 0;
  bool own_measured = false;
  // This layer's output encoding as its consumers see it: their float outputs with only this
  // tensor quantized, against the float reference (signal and noise pooled over consumers).
  double impact_signal = 0, impact_noise = 0;
  int64_t count = 0, saturated = 0;
  std::vector<float> sample_ref, sample_fixed;  // up to 1500 (float, fixed) pairs for plots
  double snr_db() const;        // 10 log10(sum ref^2 / sum (ref - fixed)^2), accumulated
  double local_snr_db() const;  // the same with the op fed by the float reference
  double own_snr_db() const;    // local, without the share of its inputs' encodings
  double encoding_snr_db() const;  // impact of its output encoding on its consumers (200: none)
  // How much error the layer is to blame for: min(own, encoding). A channel scaled up 1000x with
  // the next layer's weights scaled down (float unchanged) ruins this layer's per-tensor output
  // encoding: its own SNR stays high (the big channel dominates), its consumers' drops to ~0 dB.
  double guilt_snr_db() const { return std::min(own_snr_db(), encoding_snr_db()); }
  double cosine() const;
  double saturated_pct() const { return count ? 100.0 * static_cast<double>(saturated) / static_cast<double>(count) : 0.0; }
};

// 10 log10(signal / noise) in dB; 200 when the noise is 0 (exact), -200 when the signal is 0.
double snr_db(double signal, double noise);

class Comparer {
 public:
  // `program_dir` holds model.fxp; the float reference is the program's source model.
  explicit Comparer(const std::string& program_dir);
  explicit Comparer(Program program);
  // Runs both on one set of inputs and accumulates every layer's error energies.
  void add_sample(const std::map<std::string, Tensor>& inputs);
  // Layers in program order, and the `worst` node names (lowest local SNR first).
  nlohmann::json result(size_t worst_count = 5) const;
  const std::vector<LayerError>& layers() const { return layers_; }
  const Program& program() const { return runner_.program(); }

 private:
  ProgramRunner runner_;
  std::string source_;
  std::vector<LayerError> layers_;  // one per op output with a float counterpart
  // Float node outputs with the inputs listed in `encoded_inputs` quantized and dequantized.
  Tensor run_encoded(const Node& n, const std::vector<std::string>& encoded_inputs,
                     const std::map<std::string, Tensor>& ref, std::map<std::string, Tensor>& cache) const;
  // `known`: (signal, noise) of nodes with one encoded input already run by add_sample.
  void measure_impacts(const Graph& g, const std::map<std::string, Tensor>& ref, std::map<std::string, Tensor>& cache,
                       const std::map<std::string, std::pair<double, double>>& known);
  std::unique_ptr<Graph> float_graph_;  // the source model bound to float_shapes_
  ShapeBindings float_shapes_;
  int samples_ = 0;
};

// A readable table of compare.json's layers.
std::string compare_table(const nlohmann::json& result);
// One self-contained HTML page: summary, the graph colored by SNR (`graph_svg`, may be empty),
// float-vs-fixed scatter and error histogram of the worst layers, the per-layer table.
std::string compare_html(const nlohmann::json& result, const std::vector<LayerError>& layers,
                         const std::string& graph_svg);
// Box colors for compile_report_dot: accumulated SNR per op (red < 20 dB, yellow < 40, green).
std::map<std::string, std::string> snr_colors(const nlohmann::json& result);

}  // namespace fixpoint
