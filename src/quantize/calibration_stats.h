// Calibration statistics of every float tensor (docs/arithmetic.md §2.2).
#pragma once
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fixpoint/compiler.h"
#include "fixpoint/tensor.h"
#include "quantize/histogram.h"

namespace fixpoint {

struct CompileContext;

// (7a) Grids network inputs often live on exactly: integers (raw pixels) and 8-bit data
// normalized by 255 or 256. Coarsest first.
constexpr std::array<double, 3> kInputGrids = {1.0, 1.0 / 255.0, 1.0 / 256.0};

// Finite min/max of one tensor over all samples; for graph inputs, which grids hold every value.
struct Stats {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  std::array<bool, kInputGrids.size()> on_grid{};  // every value seen is a multiple of grid g
  bool grid_tracked = false;
  void add(const Tensor& t, bool track_grid = false);
  bool seen() const { return lo <= hi; }
  double absmax() const { return seen() ? std::max(std::abs(lo), std::abs(hi)) : 0.0; }
};

// Per-channel sums of a tensor a Conv, MatMul or Gemm reads as its data input, along the axis
// that op reduces over (its input channels): E[x_c] = sum[c] / count is what bias correction
// (bias_correction.cc) needs. Sums, not means, so parts of the samples merge by adding.
struct ChannelSums {
  int axis = 1;             // 1 (Conv, Gemm), or -1: the last axis (MatMul)
  std::vector<double> sum, count;  // per channel: finite values summed, and how many
  void add(const Tensor& t);
  double mean(size_t c) const { return count[c] > 0 ? sum[c] / count[c] : 0.0; }
};

// Per-channel finite min/max along axis 1 (NCHW) of a tensor channel equalization may rescale
// (channel_equalization.cc): the factors come from them, and the rescaled tensor's range is
// min/max over channels of lo_c / s_c, hi_c / s_c. Merged by min/max.
struct ChannelRanges {
  std::vector<double> lo, hi;
  void add(const Tensor& t);
  void merge(const ChannelRanges& o, const std::string& tensor);
};

// The channel axis `n` reduces its data input over, or nullopt when `n` is not a Conv, MatMul
// or Gemm (Gemm with transA: axis 0).
std::optional<int> channel_axis(const Node& n);

// Calibration statistics of one compile, reused by later compiles of the same model (shapes,
// passes and samples) that differ only in widths: what `fixpoint analyze` needs for its
// two compiles per layer.
//
// Also calibration statistics as a value (fixpoint calibrate, fixpoint.calibrate): made on any
// part of the samples, merged (merge_calibration), saved (calibration_file.cc) and given to a
// compile instead of samples. `fingerprint` names the calibrated graph (after the compile-time
// passes, which depend on options): statistics apply only to a compile of the same graph.
struct CalibrationCache {
  bool filled = false;
  bool given = false;        // a value the user made (calibrate, a file): a mismatch is an error
  std::string method;        // the method of the compile that filled it (cache reuse)
  std::string fingerprint;   // graph_fingerprint of the calibrated graph
  bool histograms = false;   // pass 2 ran: hist holds |x| histograms over [0, stats' absmax]
  size_t samples = 0;        // how many samples were measured (sum over merged parts)
  NonFinite input_nonfinite, tensor_nonfinite;
  std::map<std::string, Stats> stats;
  std::map<std::string, AbsHistogram> hist;
  std::map<std::string, ChannelSums> channels;  // data inputs of Conv/MatMul/Gemm (pass 1)
  std::map<std::string, ChannelRanges> channel_ranges;  // tensors channel equalization may rescale (pass 1)
  // stats, hist and channels are in the equalized program's units (channel_equalization.cc):
  // true after a whole calibration or a histogram round, false for a ranges-only round.
  bool equalized = false;
  // Adaptive rounding's codes per layer (adaptive_rounding.cc), derived from the samples that
  // made these statistics: later compiles of the same job (--range-search, --auto-mixed, analyze)
  // reuse a layer's codes while its weight scales are the same. Never saved or merged.
  struct RoundedWeights {
    Tensor weight_scale, codes;
    nlohmann::json report;  // null: no sample reached the layer's input (codes nearest)
    std::shared_ptr<const std::vector<double>> H;  // the layer's H (adaptive_rounding.cc) where small; may be null
    int64_t patches = 0;
  };
  std::map<std::string, RoundedWeights> rounded;
  // Statistics this cache held for other graphs (not `given` ones), by fingerprint: analyze
  // alternates 8- and 16-bit compiles, whose graphs differ, and each keeps its own statistics
  // instead of recalibrating every time.
  std::map<std::string, std::shared_ptr<const CalibrationCache>> earlier;
};

// Makes `cache` hold the statistics it keeps for `fingerprint` (its current ones move to
// `earlier`); false when it has none for that graph.
bool recall_calibration(CalibrationCache& cache, const std::string& fingerprint);
// Stores `value` as the cache's current statistics, keeping the previous ones in `earlier`.
void remember_calibration(CalibrationCache& cache, CalibrationCache value);

// A name of the graph calibration runs on (its nodes' names, ops, inputs and outputs, and its
// inputs' shapes): statistics apply only to a graph with the same fingerprint.
std::string graph_fingerprint(const Graph& g);

// Sample i with the batch dim restored for inputs given without it.
std::map<std::string, Tensor> calibration_sample(const CompileContext& cx, const CalibrationSource& calib, size_t i);

// Pass 1: min/max of every tensor into cx.stats, the channel sums of every Conv/MatMul/Gemm
// data input into cx.channels and, when the compile equalizes channels, the per-channel ranges of
// the tensors it may rescale into cx.channel_ranges; then (unless `part` is kRanges) the
// equalization rewrites cx.g (equalize_channels). Pass 2 (methods other than minmax): histograms
// of |x| over [0, max|x|] into cx.hist. Both stream over the samples; memory is per tensor.
// `part`: kHistograms needs cx.stats filled with the merged ranges first.
void calibrate(CompileContext& cx, const CalibrationSource& calib, CalibrationPart part = CalibrationPart::kAll);

}  // namespace fixpoint
