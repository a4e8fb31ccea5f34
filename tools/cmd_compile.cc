// fixpoint compile MODEL.onnx -o DIR [--bits 8|16|32] [--calib NAME=FILE.npy]... [--qat] ...
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "fixpoint/compile_job.h"

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
  if (given("--calib-method")) j["calib_method"] = a.calib_method;
  if (given("--scale-mode")) j["scale_mode"] = a.scale_mode;
  if (given("--bias-correction")) j["bias_correction"] = a.bias_correction;
  if (given("--narrow-intermediates")) j["narrow_intermediates"] = a.narrow_intermediates;
  if (given("--symmetric")) j["symmetric"] = a.symmetric;
  if (given("--qat")) j["qat"] = a.qat;
  if (given("--bits16")) j["bits16"] = a.bits16;
  if (given("--bits8")) j["bits8"] = a.bits8;
  if (given("--params16")) j["params16"] = a.params16;
  if (given("--deny")) j["deny"] = a.deny;
  if (given("--allow")) j["allow"] = a.allow;
  if (given("--disable-pass")) j["disable_pass"] = a.disabled_passes;
  if (given("--auto-mixed")) j["auto_mixed"] = a.auto_mixed;
  if (given("--shape")) j["shape"] = a.shapes;
  return j;
}

void run_compile(const CompileArgs& a, const CLI::App& app) {
  CompileJob job;
  if (!a.config.empty()) apply_compile_options(job, read_config(a.config), cat("--config '", a.config, "'"));
  apply_compile_options(job, given_options(a, app), kCommandLine);
  if (!a.quiet) job.options.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  std::unique_ptr<CalibrationSource> calib = open_job_calibration(job);
  CompileJobResult r = run_compile_job(a.model, job, calib.get());
  write_compile_dir(r, a.out_dir);
  namespace fs = std::filesystem;
  const CompileResult& c = r.compiled;
  // Precision warnings are printed even with --quiet: they say where the program cannot be exact.
  for (const auto& w : c.report["precision_warnings"])
    std::cerr << "fixpoint: warning: layer '" << w["layer"].get<std::string>() << "': " << w["detail"].get<std::string>() << "\n";
  const auto& nf = c.report["calibration_nonfinite"];
  int64_t in_bad = nf["input_nan"].get<int64_t>() + nf["input_inf"].get<int64_t>();
  int64_t t_bad = nf["tensor_nan"].get<int64_t>() + nf["tensor_inf"].get<int64_t>();
  if (in_bad + t_bad)
    std::cerr << "fixpoint: warning: calibration met " << nf["input_nan"] << " NaN and " << nf["input_inf"]
              << " Inf value(s) in its samples and " << nf["tensor_nan"] << " NaN and " << nf["tensor_inf"]
              << " Inf in computed tensors; ranges ignore them\n";
  if (!a.quiet) {
    size_t nfloat = c.report["fallback_nodes"].size();
    const auto& sc = c.report["subgraph_counts"];
    std::cout << "compiled " << a.model << " -> " << (fs::path(a.out_dir) / "model.fxp").string() << " ("
              << c.program.ops.size() << " ops, " << nfloat << " on the CPU in float; " << sc["accelerator"].get<int>()
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
