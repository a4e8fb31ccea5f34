// fixpoint compile MODEL.onnx -o DIR [--bits 8|16|32] [--calib NAME=FILE.npy]... [--qat] ...
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "fixpoint/artifact.h"
#include "fixpoint/auto_mixed.h"
#include "fixpoint/compiler.h"

namespace fixpoint::cli {
namespace {

struct CompileArgs {
  std::string model, out_dir, scale_mode = "float", calib_method = "percentile", config;
  int bits = 8;
  double auto_mixed = 0;  // 0: off
  bool qat = false, quiet = false, bias_correction = false, asymmetric = false, symmetric = false,
       narrow_intermediates = false;
  std::vector<std::string> calib, shapes, bits16, bits8, params16, deny, allow, disabled_passes;
};

// --config FILE.json: any compile option by its own name (bits, calib, calib_method, scale_mode,
// qat, bits16, bits8, params16, deny, allow, shape) or by TIDL's (tensor_bits,
// output_feature_16bit_names_list, params_16bit_names_list, quantization_scale_type,
// calibration_frames, deny_list and deny_list:layer_type [op types], deny_list:layer_name).
// Command-line options win.
struct ConfigValues {
  int calibration_frames = 0;  // 0: all samples
};

std::vector<std::string> json_list(const nlohmann::json& v, const std::string& key) {
  std::vector<std::string> r;
  if (v.is_string()) r.push_back(v.get<std::string>());
  else if (v.is_array())
    for (const auto& e : v) r.push_back(e.get<std::string>());
  else fail("--config: '", key, "' must be a string or a list of strings");
  return r;
}

ConfigValues apply_config(CompileArgs& a, const CLI::App& app) {
  ConfigValues cv;
  if (a.config.empty()) return cv;
  std::ifstream f(a.config);
  FP_CHECK(f.good(), "--config '", a.config, "': cannot open file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    fail("--config '", a.config, "': not valid JSON (", e.what(), ")");
  }
  FP_CHECK(j.is_object(), "--config '", a.config, "': expected a JSON object");
  auto given = [&app](const char* opt) { return app.count(opt) > 0; };
  try {
    for (const auto& [k, v] : j.items()) {
      if (k == "bits" || k == "tensor_bits") {
        if (!given("--bits")) a.bits = v.get<int>();
      } else if (k == "calib_method") {
        if (!given("--calib-method")) a.calib_method = v.get<std::string>();
      } else if (k == "scale_mode") {
        if (!given("--scale-mode")) a.scale_mode = v.get<std::string>();
      } else if (k == "quantization_scale_type") {
        int t = v.get<int>();
        FP_CHECK(t == 0 || t == 1, "--config: quantization_scale_type ", t, " is not supported (0 or 1)");
        if (!given("--scale-mode")) a.scale_mode = t == 1 ? "pow2" : "float";
      } else if (k == "qat") {
        if (!given("--qat")) a.qat = v.get<bool>();
      } else if (k == "bits16" || k == "output_feature_16bit_names_list") {
        if (!given("--bits16")) a.bits16 = json_list(v, k);
      } else if (k == "bits8") {
        if (!given("--bits8")) a.bits8 = json_list(v, k);
      } else if (k == "params16" || k == "params_16bit_names_list") {
        if (!given("--params16")) a.params16 = json_list(v, k);
      } else if (k == "deny" || k == "deny_list:layer_name") {
        if (!given("--deny")) for (const auto& e : json_list(v, k)) a.deny.push_back(e);
      } else if (k == "deny_list" || k == "deny_list:layer_type") {
        // TIDL lists op types here ("MaxPool, Flatten").
        if (!given("--deny"))
          for (const auto& e : split_list(json_list(v, k))) a.deny.push_back(e.rfind("op:", 0) == 0 ? e : "op:" + e);
      } else if (k == "allow") {
        if (!given("--allow")) a.allow = json_list(v, k);
      } else if (k == "calib") {
        if (!given("--calib")) a.calib = json_list(v, k);
      } else if (k == "shape") {
        if (!given("--shape")) a.shapes = json_list(v, k);
      } else if (k == "bias_correction") {
        if (!given("--bias-correction")) a.bias_correction = v.get<bool>();
      } else if (k == "narrow_intermediates") {
        if (!given("--narrow-intermediates")) a.narrow_intermediates = v.get<bool>();
      } else if (k == "auto_mixed" || k == "mixed_precision_factor") {
        if (!given("--auto-mixed")) a.auto_mixed = v.get<double>();
      } else if (k == "calibration_frames") {
        cv.calibration_frames = v.get<int>();
      } else {
        fail("--config '", a.config, "': unknown option '", k, "'");
      }
    }
  } catch (const nlohmann::json::exception& e) {
    fail("--config '", a.config, "': wrong value type (", e.what(), ")");
  }
  return cv;
}

// The first `n` samples of another source (TIDL's calibration_frames).
class FirstSamples : public CalibrationSource {
 public:
  FirstSamples(std::unique_ptr<CalibrationSource> s, size_t n) : s_(std::move(s)), n_(std::min(n, s_->size())) {}
  size_t size() const override { return n_; }
  std::map<std::string, Tensor> sample(size_t i) const override { return s_->sample(i); }

 private:
  std::unique_ptr<CalibrationSource> s_;
  size_t n_;
};

void run_compile(CompileArgs a, const CLI::App& app) {
  ConfigValues cv = apply_config(a, app);
  CompileOptions o;
  o.bits = a.bits;
  o.scale_mode = a.scale_mode;
  o.calib_method = a.calib_method;
  o.qat = a.qat;
  o.bias_correction = a.bias_correction;
  o.asymmetric = !a.symmetric;  // (8a) is the default; --asymmetric only says so
  o.wide_intermediates = !a.narrow_intermediates;
  o.bits16 = split_list(a.bits16);
  o.bits8 = split_list(a.bits8);
  FP_CHECK(o.bits8.empty() || a.bits == 16, "--bits8 keeps layers at 8 bits in a 16-bit program: use it with --bits 16");
  o.params16 = split_list(a.params16);
  o.deny = split_list(a.deny);
  o.disabled_passes = split_list(a.disabled_passes);
  o.allow = split_list(a.allow);
  o.shapes = parse_shape_options(a.shapes);
  if (!a.quiet) o.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  std::unique_ptr<CalibrationSource> calib;
  if (!a.calib.empty()) calib = open_calibration(a.calib);
  if (calib && cv.calibration_frames > 0)
    calib = std::make_unique<FirstSamples>(std::move(calib), static_cast<size_t>(cv.calibration_frames));
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(a.out_dir, ec);
  FP_CHECK(!ec, "-o '", a.out_dir, "': ", ec.message());
  nlohmann::json auto_mixed;
  if (a.auto_mixed > 0) {
    FP_CHECK(calib, "--auto-mixed needs --calib samples to measure sensitivity");
    AutoMixedResult am = choose_mixed_precision(a.model, o, *calib, a.auto_mixed);
    for (const auto& n : am.bits16) o.bits16.push_back(n);
    auto_mixed = am.report;
    // A reusable overrides file: `--config DIR/mixed_precision.json` reproduces the choice.
    std::ofstream(fs::path(a.out_dir) / "mixed_precision.json") << nlohmann::json{{"bits16", o.bits16}}.dump(1) << "\n";
    if (!a.quiet)
      std::cerr << "auto-mixed: " << am.bits16.size() << " layer(s) at 16 bits, cost " << am.report["cost_chosen"].get<double>()
                << " of budget " << am.report["budget"].get<double>() << "\n";
  }
  CompileResult r = compile_model(a.model, o, calib.get());
  if (!auto_mixed.is_null()) {
    r.report["auto_mixed"] = auto_mixed;
    r.report_text += "\nauto mixed precision (--auto-mixed " + std::to_string(a.auto_mixed) + "): " +
                     std::to_string(auto_mixed["bits16"].size()) + " layer(s) at 16 bits, listed in mixed_precision.json\n";
  }
  save_program(r.program, (fs::path(a.out_dir) / "model.fxp").string());
  std::ofstream(fs::path(a.out_dir) / "compile_report.json") << r.report.dump(2) << "\n";
  std::ofstream(fs::path(a.out_dir) / "compile_report.txt") << r.report_text;
  // Precision warnings are printed even with --quiet: they say where the program cannot be exact.
  for (const auto& w : r.report["precision_warnings"])
    std::cerr << "fixpoint: warning: layer '" << w["layer"].get<std::string>() << "': " << w["detail"].get<std::string>() << "\n";
  const auto& nf = r.report["calibration_nonfinite"];
  int64_t in_bad = nf["input_nan"].get<int64_t>() + nf["input_inf"].get<int64_t>();
  int64_t t_bad = nf["tensor_nan"].get<int64_t>() + nf["tensor_inf"].get<int64_t>();
  if (in_bad + t_bad)
    std::cerr << "fixpoint: warning: calibration met " << nf["input_nan"] << " NaN and " << nf["input_inf"]
              << " Inf value(s) in its samples and " << nf["tensor_nan"] << " NaN and " << nf["tensor_inf"]
              << " Inf in computed tensors; ranges ignore them\n";
  if (!a.quiet) {
    size_t nfloat = r.report["fallback_nodes"].size();
    const auto& sc = r.report["subgraph_counts"];
    std::cout << "compiled " << a.model << " -> " << (fs::path(a.out_dir) / "model.fxp").string() << " ("
              << r.program.ops.size() << " ops, " << nfloat << " on the CPU in float; " << sc["accelerator"].get<int>()
              << " accelerator + " << sc["cpu"].get<int>() << " cpu subgraph(s); "
              << (fs::path(a.out_dir) / "compile_report.txt").string() << ")\n";
  }
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto a = std::make_shared<CompileArgs>();
  CLI::App* c = app.add_subcommand("compile", "Compile a model to a fixed-point program (DIR/model.fxp + reports)");
  c->add_option("model", a->model, "ONNX model file")->required();
  c->add_option("-o,--output-dir", a->out_dir, "Folder for model.fxp and compile_report.{json,txt}")->required();
  c->add_option("--bits", a->bits, "Default width: 8, 16, or 32 (float reference, no calibration)");
  c->add_option("--calib", a->calib, "NAME=FILE.npy ([N, ...] stacked samples) or NAME=DIR of .npy samples");
  c->add_option("--calib-method", a->calib_method, "Range estimation: percentile (default, 99.99th of |x|), minmax, mse");
  c->add_option("--scale-mode", a->scale_mode, "float (any scale, multiplier+shift) or pow2 (power-of-two scales)");
  c->add_flag("--bias-correction", a->bias_correction, "Correct each layer's bias by its mean calibration error");
  c->add_flag("--narrow-intermediates", a->narrow_intermediates,
              "8-bit: store every tensor at 8 bits, also those inside fused kernels (docs/arithmetic.md 2.7)");
  auto* asym = c->add_flag("--asymmetric", a->asymmetric,
                           "8-bit: uint8 with a zero point for lopsided signed ranges (the default)");
  c->add_flag("--symmetric", a->symmetric, "8-bit: every signed tensor int8 with zero point 0 (no (8a))")->excludes(asym);
  c->add_flag("--qat", a->qat, "Use Clip/Relu6 ranges of a QAT model as quantization ranges");
  c->add_option("--bits16", a->bits16, "Layers at 16 bits: node names, output names, globs or op:TYPE (comma-separated)");
  c->add_option("--bits8", a->bits8, "With --bits 16: layers kept at 8 bits (same syntax)");
  c->add_option("--params16", a->params16, "Layers with 16-bit weights only (same syntax)");
  c->add_option("--deny", a->deny, "Nodes forced to the CPU in float (same syntax, e.g. op:Tanh)");
  c->add_option("--allow", a->allow, "Only these nodes may run on the accelerator (same syntax)");
  c->add_option("--disable-pass", a->disabled_passes, "Skip compile-time rewrites by name (see compile_report rewrites)");
  c->add_option("--auto-mixed", a->auto_mixed,
                 "Promote the most sensitive layers to 16 bits within FACTOR x the all-8-bit cost (MAC-weighted)");
  c->add_option("--shape", a->shapes, "Bind an input's shape, e.g. --shape x=1x3x48x320");
  c->add_option("--config", a->config, "JSON file with any of these options (TIDL names accepted)");
  c->add_flag("-q,--quiet", a->quiet, "No progress or summary lines");
  c->callback([a, c] { run_compile(*a, *c); });
}

}  // namespace fixpoint::cli
