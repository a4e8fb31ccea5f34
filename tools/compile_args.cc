#include "compile_args.h"

#include <fstream>

#include <nlohmann/json.hpp>

namespace fixpoint::cli {
namespace {

// --config FILE.json: any compile option by its own name or TIDL's (apply_compile_options);
// options given on the command line win.
nlohmann::json read_config(const std::string& path) {
  std::ifstream f(path);
  FP_CHECK(f.good(), "--config '", path, "': cannot open file");
  try {
    return nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    fail("--config '", path, "': not valid JSON (", e.what(), ")");
  }
}

// The options given on the command line, by their apply_compile_options names.
nlohmann::json given_options(const CompileArgs& a, const CLI::App& app) {
  nlohmann::json j = nlohmann::json::object();
  auto given = [&app](const char* opt) { return app.count(opt) > 0; };
  if (given("--bits")) j["bits"] = a.bits;
  if (given("--calib")) j["calib"] = a.calib;
  if (given("--stats")) j["stats"] = a.stats;
  if (given("--calib-method")) j["calib_method"] = a.calib_method;
  if (given("--calib-percentile")) j["calib_percentile"] = a.calib_percentile;
  if (given("--scale-mode")) j["scale_mode"] = a.scale_mode;
  if (given("--bias-correction")) j["bias_correction"] = a.bias_correction;
  if (given("--headroom16")) j["headroom16"] = a.headroom16;
  if (given("--adaptive-rounding")) j["adaptive_rounding"] = a.adaptive_rounding;
  if (given("--channel-equalization")) j["channel_equalization"] = a.channel_equalization;
  if (given("--narrow-intermediates")) j["narrow_intermediates"] = a.narrow_intermediates;
  if (given("--narrow-stream")) j["narrow_stream"] = a.narrow_stream;
  if (given("--narrow-softmax")) j["narrow_softmax"] = a.narrow_softmax;
  if (given("--symmetric")) j["symmetric"] = a.symmetric;
  if (given("--per-tensor-weights")) j["per_tensor_weights"] = a.per_tensor_weights;
  if (given("--qat")) j["qat"] = a.qat;
  if (given("--bits16")) j["bits16"] = a.bits16;
  if (given("--bits8")) j["bits8"] = a.bits8;
  if (given("--params16")) j["params16"] = a.params16;
  if (given("--params8")) j["params8"] = a.params8;
  if (given("--out16")) j["out16"] = a.out16;
  if (given("--deny")) j["deny"] = a.deny;
  if (given("--allow")) j["allow"] = a.allow;
  if (given("--disable-pass")) j["disable_pass"] = a.disabled_passes;
  if (given("--auto-mixed")) j["auto_mixed"] = a.auto_mixed;
  if (given("--range-search")) j["range_search"] = a.range_search;
  if (given("--shape")) j["shape"] = a.shapes;
  return j;
}

}  // namespace

void add_compile_options(CLI::App* app, CompileArgs& a) {
  app->add_option("--bits", a.bits, "Default width: 8, 16, or 32 (float reference, no calibration)");
  app->add_option("--calib", a.calib, "NAME=FILE.npy ([N, ...] stacked samples) or NAME=DIR of .npy samples");
  app->add_option("--stats", a.stats, "Calibration statistics FILE.fxs from `fixpoint calibrate` (several: merged)");
  app->add_option("--calib-method", a.calib_method, "Range estimation: percentile (default, 99.99th of |x|), minmax, mse");
  app->add_option("--calib-percentile", a.calib_percentile,
                  "With --calib-method percentile: the percentile of |x| that bounds 8-bit ranges (default 99.99)");
  app->add_option("--scale-mode", a.scale_mode, "float (any scale, multiplier+shift) or pow2 (power-of-two scales)");
  app->add_flag("--bias-correction,!--no-bias-correction", a.bias_correction,
                "Correct each layer's bias by the mean shift its weight rounding causes (default: on when calibrated)");
  app->add_flag("--adaptive-rounding,!--no-adaptive-rounding", a.adaptive_rounding,
                "8-bit weights: each code rounded up or down by the layer's output error on the calibration samples "
                "(AdaRound's objective, docs/arithmetic.md 10c), not to the nearest (default: on when calibrated with samples)");
  app->add_flag("--channel-equalization,!--no-channel-equalization", a.channel_equalization,
                "8-bit: rescale the channels of each activation between Convs (through Relu, MaxPool) to one calibrated "
                "range, the Convs' weights compensating; float computes the same (docs/arithmetic.md 7d; default: on when calibrated)");
  app->add_option("--headroom16", a.headroom16,
                  "--bits 16: calibrated ranges x FACTOR (default 1.5; 1: the calibrated range exactly)");
  app->add_flag("--narrow-stream", a.narrow_stream,
              "Store a transformer's residual stream (Add outputs a LayerNormalization reads) at the layers' width, "
              "not one width up (8-bit programs: 16, 16-bit: 32; docs/arithmetic.md 2.7)");
  app->add_flag("--narrow-softmax", a.narrow_softmax,
              "8-bit: store a Softmax over rows of more than 16 entries at 8 bits (docs/arithmetic.md 2.7)");
  app->add_flag("--narrow-intermediates", a.narrow_intermediates,
              "8-bit: store every tensor at 8 bits, also those inside fused kernels (docs/arithmetic.md 2.7)");
  auto* asym = app->add_flag("--asymmetric", a.asymmetric,
                           "8-bit: uint8 with a zero point for lopsided signed ranges (the default)");
  app->add_flag("--symmetric", a.symmetric, "8-bit: every signed tensor int8 with zero point 0 (no (8a))")->excludes(asym);
  app->add_flag("--per-tensor-weights", a.per_tensor_weights,
                "One weight scale per layer (the largest |w| of all its output channels), not one per output channel "
                "(docs/arithmetic.md 2.5)");
  app->add_flag("--qat", a.qat, "Use Clip/Relu6 ranges of a QAT model as quantization ranges");
  app->add_option("--bits16", a.bits16, "Layers at 16 bits: node names, output names, globs or op:TYPE (comma-separated)");
  app->add_option("--bits8", a.bits8, "With --bits 16: layers kept at 8 bits (same syntax)");
  app->add_option("--params16", a.params16, "Layers with 16-bit weights only (same syntax)");
  app->add_option("--params8", a.params8,
                  "16-bit layers whose weights stay 8-bit ('*': every layer; about twice the 16-bit conv speed; same syntax)");
  app->add_option("--out16", a.out16, "8-bit layers whose output tensors are stored at 16 bits (same syntax)");
  app->add_option("--deny", a.deny, "Nodes forced to the CPU in float (same syntax, e.g. op:Tanh)");
  app->add_option("--allow", a.allow, "Only these nodes may run on the accelerator (same syntax)");
  app->add_option("--disable-pass", a.disabled_passes, "Skip compile-time rewrites by name (see compile_report rewrites)");
  app->add_option("--auto-mixed", a.auto_mixed,
                 "Promote the most sensitive layers to 16 bits within FACTOR x the all-8-bit cost (MAC-weighted)");
  app->add_flag("--range-search", a.range_search,
               "8-bit: choose each sensitive tensor's range by the error it causes at the graph outputs on the "
               "calibration samples (docs/arithmetic.md 7c); runs before --auto-mixed");
  app->add_option("--shape", a.shapes, "Bind an input's shape, e.g. --shape x=1x3x48x320");
  app->add_option("--config", a.config, "JSON file with any of these options (TIDL names accepted)");
}

CompileJob job_from_args(const CompileArgs& a, const CLI::App& app) {
  CompileJob job;
  if (!a.config.empty()) apply_compile_options(job, read_config(a.config), cat("--config '", a.config, "'"));
  apply_compile_options(job, given_options(a, app), kCommandLine);
  return job;
}

}  // namespace fixpoint::cli
