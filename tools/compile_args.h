// The compile options, shared by `fixpoint compile` and `fixpoint calibrate` (the graph
// calibration measures depends on them).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "fixpoint/compile_job.h"

namespace fixpoint::cli {

struct CompileArgs {
  std::string model, out_dir, scale_mode = "float", calib_method = "percentile", config;
  int bits = 8;
  double auto_mixed = 0;  // 0: off
  double headroom16 = 1.5, calib_percentile = kDefaultCalibPercentile;
  bool qat = false, quiet = false, range_search = false, adaptive_rounding = true, channel_equalization = true, bias_correction = true, asymmetric = false, symmetric = false, per_tensor_weights = false,
       narrow_intermediates = false, narrow_stream = false, narrow_softmax = false;
  std::vector<std::string> calib, stats, shapes, bits16, bits8, params16, params8, out16, deny, allow, disabled_passes;
};

// Adds --bits, --calib, --stats, --calib-method, ..., --config to a subcommand.
void add_compile_options(CLI::App* app, CompileArgs& a);
// --config's options, then the command line's (which win).
CompileJob job_from_args(const CompileArgs& a, const CLI::App& app);

}  // namespace fixpoint::cli
