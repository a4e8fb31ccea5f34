// fixpoint: one compile as a user asks for it, shared by `fixpoint compile` and the Python module:
// the options by name (its own or TIDL's), calibration files, auto mixed precision, the output
// folder. The compiler itself (compiler.h) knows nothing of option names or files.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixpoint/compiler.h"

namespace fixpoint {

struct CompileJob {
  CompileOptions options;
  std::vector<std::string> calib;  // NAME=FILE.npy or NAME=DIR (open_calibration)
  std::vector<std::string> stats;  // calibration statistics files (fixpoint calibrate), merged
  std::shared_ptr<CalibrationCache> stats_value;  // or statistics in memory (fixpoint.calibrate)
  int calibration_frames = 0;      // TIDL's: use the first N samples; 0: all
  double auto_mixed = 0;           // --auto-mixed FACTOR; 0: off
  bool range_search = false;       // --range-search: output-aware 8-bit ranges (range_search.h), before auto_mixed
};

// LIST options: repeated and/or comma-separated values ("a,b", "c") -> {a, b, c}.
std::vector<std::string> split_list(const std::vector<std::string>& v);
// "NAME=1x3x224x224" specs -> bindings; errors name `option` and the spec.
ShapeBindings parse_shape_options(const std::vector<std::string>& specs, const std::string& option = "--shape");

// Sets the options named in `obj` (a JSON object), each by its own name (bits, calib,
// calib_method, calib_percentile, scale_mode, qat, bits16, bits8, params16, params8, out16, deny, allow, disable_pass, shape,
// bias_correction, adaptive_rounding, channel_equalization, narrow_intermediates, narrow_stream, narrow_softmax, symmetric, per_tensor_weights, auto_mixed, range_search,
// range_factors ({"tensor": factor}), calibration_frames, stats) or by TIDL's
// (tensor_bits, output_feature_16bit_names_list, params_16bit_names_list,
// quantization_scale_type, deny_list / deny_list:layer_type [op types], deny_list:layer_name,
// mixed_precision_factor). An option named in `obj` replaces the job's value (the deny keys of
// one object add up). List values may be a string or a list of strings; `shape` is
// {"x": [1, 3, 48, 320]} or "x=1x3x48x320" strings. `origin` names the source in errors
// ("--config 'f.json'", "fixpoint.compile"); with kCommandLine, options are named as flags
// ("--bits must be 8, 16 or 32").
inline constexpr const char* kCommandLine = "command line";
void apply_compile_options(CompileJob& job, const nlohmann::json& obj, const std::string& origin);

struct CompileJobResult {
  CompileResult compiled;
  // {"bits16": [...], "out16": [...], "range_factors": {...}} when auto_mixed or range_search
  // chose something, else null
  nlohmann::json mixed_precision;
};

// Opens the job's calibration files (null when it has none).
std::unique_ptr<CalibrationSource> open_job_calibration(const CompileJob& job);

// Statistics files loaded and merged (any order gives the same); errors name `option` and the file.
std::shared_ptr<CalibrationCache> load_merged_calibration(const std::vector<std::string>& paths, const std::string& option);

// The job's statistics: its files (load_merged_calibration), or stats_value; null when it has none.
std::shared_ptr<CalibrationCache> job_statistics(const CompileJob& job);

// Compiles the model file with the job's options and `calib` (may be null; auto_mixed needs it).
CompileJobResult run_compile_job(const std::string& model_path, const CompileJob& job, const CalibrationSource* calib);

// Writes DIR/model.fxp, compile_report.{json,txt} and, after auto mixed precision or a range
// search, mixed_precision.json (a --config file that reproduces the choice).
void write_compile_dir(const CompileJobResult& r, const std::string& dir);
// The same from the parts (a loaded program need not be copied into a CompileJobResult).
void write_compile_dir(const Program& program, const nlohmann::json& report, const std::string& report_text,
                       const nlohmann::json& mixed_precision, const std::string& dir);

}  // namespace fixpoint
