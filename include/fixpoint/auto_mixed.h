// fixpoint: automatic mixed precision (compile --auto-mixed FACTOR), docs/debugging.md.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixpoint/compiler.h"

namespace fixpoint {

struct AutoMixedResult {
  std::vector<std::string> bits16;  // ONNX node names promoted to 16 bits
  std::vector<std::string> out16;   // 8-bit layers whose outputs are stored at 16 bits (--out16)
  nlohmann::json report;            // cost model, budget, per-layer sensitivity and decisions
};

// Cost model: a layer costs its multiply-accumulates (Conv, ConvTranspose, Gemm, MatMul) or, for
// any other op, its output elements; a 16-bit layer costs twice its 8-bit cost (TIDL's
// mixed_precision_factor is likewise a ratio of weighted MACs). Starting from `opts` at 8 bits:
//  1. screen: candidates (a layer at 16 bits; where its output encoding is its worse error, also
//     the output alone at 16 bits, costing its readers' MACs again; not data movement, which
//     follows its input's width) that fit the budget alone, taken alternately by local noise per
//     cost and by local noise (10^(-guilt SNR/10), the SNR from a float-vs-fixed comparison on the
//     first `samples` calibration inputs);
//  2. measure: the first 24 screened candidates, each compiled alone at 16
//     bits (same calibration statistics): the graph outputs' noise against float on up to 8
//     calibration samples;
//  3. choose by forward selection in order of measured noise reduction per added cost: a
//     candidate joins when it fits the budget (factor x the all-8-bit cost) and the set with it
//     measures better than without (errors of separate layers do not add exactly).
// The report gives each layer's numbers and decision, and the output SNR all at 8 bits, predicted
// (gains added) and measured for the chosen set. A set that cannot beat all-8-bit is never chosen.
AutoMixedResult choose_mixed_precision(const std::string& model_path, const CompileOptions& opts,
                                       const CalibrationSource& calib, double factor, size_t samples = 2);

}  // namespace fixpoint
