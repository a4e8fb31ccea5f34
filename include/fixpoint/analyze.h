// fixpoint: per-layer precision sensitivity (fixpoint analyze), docs/debugging.md.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixpoint/compiler.h"

namespace fixpoint {

struct SensitivityOptions {
  // "snr": SNR (dB) of all graph outputs against the float reference, pooled over the inputs.
  // Otherwise the path of an executable called as `METRIC FIXED_DIR FLOAT_DIR` (each holding
  // one folder per input set, 0/, 1/, ..., with <output>.npy files) that prints one number on
  // the last line of its stdout; higher must mean better (e.g. an accuracy).
  std::string metric = "snr";
  // When set, the metric in-process (Python's fixpoint.analyze): the program's outputs and the
  // float reference's, one map per input set; higher must mean better. Wins over `metric`.
  std::function<double(const std::vector<std::map<std::string, Tensor>>& fixed,
                       const std::vector<std::map<std::string, Tensor>>& reference)>
      metric_fn;
  std::string metric_name = "custom";  // what analysis.json calls metric_fn
  std::vector<std::string> layers;  // candidates (LIST syntax); empty: every fixed-point layer
  std::string work_dir;             // scratch folder for an executable metric
  int threads = 1;
};

// For each candidate layer L, two programs compiled from the same calibration statistics:
//   alone at 8 bits:  L at 8 bits, every other layer at 16 bits  -> cost  = m(all 16) - m(L at 8)
//   alone at 16 bits: L at 16 bits, every other layer at 8 bits  -> gain  = m(L at 16) - m(all 8)
// where m is the metric on `inputs`. Returns analysis.json: the metric of the float reference
// (for an executable metric), of all-8 and all-16, one entry per layer, and both rankings
// (largest cost / gain first).
nlohmann::json analyze_sensitivity(const std::string& model_path, const CompileOptions& base,
                                   const CalibrationSource& calib,
                                   const std::vector<std::map<std::string, Tensor>>& inputs,
                                   const SensitivityOptions& so);

// The readable table of analysis.json: layers ranked by gain at 16 bits, with their cost at 8.
std::string sensitivity_table(const nlohmann::json& analysis, size_t rows = 20);

}  // namespace fixpoint
