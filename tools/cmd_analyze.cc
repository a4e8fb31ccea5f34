// fixpoint analyze MODEL.onnx --calib NAME=FILE.npy --input NAME=FILE.npy... [--metric snr|FILE]
// Per-layer precision sensitivity, both ways (docs/debugging.md).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli_common.h"
#include "fixpoint/analyze.h"

namespace fixpoint::cli {
namespace {

struct AnalyzeArgs {
  std::string model, out_dir = "analyze_out", metric = "snr", calib_method = "percentile", scale_mode = "float";
  std::vector<std::string> calib, inputs, shapes, layers, deny, allow;
  int threads = 1;
  double calib_percentile = kDefaultCalibPercentile;
  size_t rows = 20;
  bool quiet = false;
};

void run_analyze(const AnalyzeArgs& a) {
  namespace fs = std::filesystem;
  FP_CHECK(fs::is_regular_file(a.model), "'", a.model, "': analyze needs an ONNX model file");
  CompileOptions o;
  o.calib_method = a.calib_method;
  o.calib_percentile = a.calib_percentile;
  o.scale_mode = a.scale_mode;
  o.shapes = parse_shape_options(a.shapes);
  o.deny = split_list(a.deny);
  o.allow = split_list(a.allow);
  if (!a.quiet) o.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  std::unique_ptr<CalibrationSource> calib = open_calibration(a.calib);
  Graph probe = import_onnx_file(a.model, ImportOptions{{}, false});
  auto sets = load_input_sets(a.inputs, probe.inputs);
  std::error_code ec;
  fs::create_directories(a.out_dir, ec);
  FP_CHECK(!ec, "-o '", a.out_dir, "': ", ec.message());
  SensitivityOptions so;
  so.metric = a.metric;
  so.layers = split_list(a.layers);
  so.threads = a.threads;
  so.work_dir = (fs::path(a.out_dir) / "metric_work").string();
  nlohmann::json r = analyze_sensitivity(a.model, o, *calib, sets, so);
  std::ofstream(fs::path(a.out_dir) / "analysis.json") << r.dump(1) << "\n";
  std::string table = sensitivity_table(r, a.rows);
  std::ofstream(fs::path(a.out_dir) / "analysis.txt") << sensitivity_table(r, r["layers"].size());
  if (!a.quiet) std::cout << table;
}

}  // namespace

void add_analyze_command(CLI::App& app) {
  auto a = std::make_shared<AnalyzeArgs>();
  CLI::App* c = app.add_subcommand(
      "analyze", "Rank layers by what 8 bits costs (rest 16-bit) and 16 bits gains (rest 8-bit), each layer alone");
  c->add_option("model", a->model, "ONNX model file")->required();
  c->add_option("--calib", a->calib, "NAME=FILE.npy ([N, ...] stacked samples) or NAME=DIR, as for compile")->required();
  c->add_option("--input", a->inputs, "NAME=FILE.npy to measure on; repeat a NAME for another input set")->required();
  c->add_option("--metric", a->metric,
                "snr (output SNR vs float, dB) or an executable run as `FILE FIXED_DIR FLOAT_DIR` printing a score "
                "(higher is better) on its last line");
  c->add_option("--layers", a->layers, "Only these candidate layers (node names, output names, globs, op:TYPE)");
  c->add_option("-o,--output-dir", a->out_dir, "Folder for analysis.json and analysis.txt (default analyze_out)");
  c->add_option("--shape", a->shapes, "Bind an input's shape (NAME=1x3x48x320), as for compile");
  c->add_option("--calib-method", a->calib_method, "As for compile (default percentile)");
  c->add_option("--calib-percentile", a->calib_percentile, "As for compile (default 99.99)");
  c->add_option("--scale-mode", a->scale_mode, "As for compile (float or pow2)");
  c->add_option("--deny", a->deny, "As for compile: nodes kept on the CPU");
  c->add_option("--allow", a->allow, "As for compile: only these may run on the accelerator");
  c->add_option("--threads", a->threads, "Threads for the integer kernels")->check(CLI::Range(1, 256));
  c->add_option("--rows", a->rows, "Rows of the printed table (analysis.txt has all)");
  c->add_flag("-q,--quiet", a->quiet, "No progress lines and no table on stdout");
  c->callback([a] { run_analyze(*a); });
}

}  // namespace fixpoint::cli
