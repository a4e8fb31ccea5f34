// fixpoint: output-aware range choice (compile --range-search), docs/arithmetic.md (7c) and
// docs/debugging.md.
#pragma once
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "fixpoint/compiler.h"

namespace fixpoint {

struct RangeSearchResult {
  std::map<std::string, double> factors;  // tensor -> factor on its calibrated range (CompileOptions::range_factors)
  nlohmann::json report;                  // per tensor: the factors tried and the output SNR of each
};

// Chooses the 8-bit activation ranges of `opts`'s program by the error they cause at the graph
// outputs, on the calibration samples. Starting from the calibrated ranges (and any factors in
// opts.range_factors):
//  1. screen: the 8-bit op outputs (not data movement, which takes its input's encoding), ranked
//     by the noise their encoding causes at their consumers (encoding SNR from a float-vs-fixed
//     comparison on the first 2 calibration samples), the worst `max_tensors` kept;
//  2. coordinate descent, worst first: each tensor's range times each of 0.5, 0.7, 0.85, 1.2,
//     1.5, 2 (the others as chosen so far), compiled with the same calibration statistics and
//     run on up to 16 calibration samples; the factor with the least output noise against the
//     float reference is kept when it beats the current choice by at least 1%.
// A choice that does not reduce the measured output error is never kept, so the result is never
// worse than the calibrated ranges on the samples it was measured on.
RangeSearchResult choose_ranges(const std::string& model_path, const CompileOptions& opts, const CalibrationSource& calib,
                                size_t max_tensors = 16);

}  // namespace fixpoint
