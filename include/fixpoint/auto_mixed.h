// fixpoint: automatic mixed precision (compile --auto-mixed FACTOR), docs/debugging.md.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixpoint/compiler.h"

namespace fixpoint {

struct AutoMixedResult {
  std::vector<std::string> bits16;  // ONNX node names promoted to 16 bits
  nlohmann::json report;            // cost model, budget, per-layer sensitivity and decisions
};

// Cost model: a layer costs its multiply-accumulates (Conv, ConvTranspose, Gemm, MatMul) or, for
// any other op, its output elements; a 16-bit layer costs twice its 8-bit cost (TIDL's
// mixed_precision_factor is likewise a ratio of weighted MACs). Starting from `opts` at 8 bits,
// layers are promoted greedily in order of measured noise per cost (10^(-local SNR/10) / cost8,
// the local SNR from a float-vs-fixed comparison on the first `samples` calibration inputs) while
// the total cost stays within factor x the all-8-bit cost; layers at 40 dB local SNR or more stay.
AutoMixedResult choose_mixed_precision(const std::string& model_path, const CompileOptions& opts,
                                       const CalibrationSource& calib, double factor, size_t samples = 2);

}  // namespace fixpoint
