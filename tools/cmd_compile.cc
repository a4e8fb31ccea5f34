// fixpoint compile MODEL.onnx -o DIR [--bits 8|16|32] [--calib NAME=FILE.npy]... [--qat] ...
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli_common.h"
#include "fixpoint/compiler.h"

namespace fixpoint::cli {
namespace {

struct CompileArgs {
  std::string model, out_dir, scale_mode = "float", calib_method = "percentile", config;
  int bits = 8;
  bool qat = false, quiet = false;
  std::vector<std::string> calib, shapes, bits16, params16;
};

// LIST options accept comma-separated values too.
std::vector<std::string> split_list(const std::vector<std::string>& v) {
  std::vector<std::string> r;
  for (const auto& s : v) {
    std::string cur;
    for (char c : s + ",") {
      if (c == ',') {
        if (!cur.empty()) r.push_back(cur);
        cur.clear();
      } else if (c != ' ') {
        cur += c;
      }
    }
  }
  return r;
}

void run_compile(const CompileArgs& a) {
  CompileOptions o;
  o.bits = a.bits;
  o.scale_mode = a.scale_mode;
  o.calib_method = a.calib_method;
  o.qat = a.qat;
  o.bits16 = split_list(a.bits16);
  o.params16 = split_list(a.params16);
  o.shapes = parse_shape_options(a.shapes);
  if (!a.quiet) o.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  std::unique_ptr<CalibrationSource> calib;
  if (!a.calib.empty()) calib = open_calibration(a.calib);
  CompileResult r = compile_model(a.model, o, calib.get());
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(a.out_dir, ec);
  FP_CHECK(!ec, "-o '", a.out_dir, "': ", ec.message());
  save_program(r.program, (fs::path(a.out_dir) / "model.fxp").string());
  std::ofstream(fs::path(a.out_dir) / "compile_report.json") << r.report.dump(2) << "\n";
  std::ofstream(fs::path(a.out_dir) / "compile_report.txt") << r.report_text;
  if (!a.quiet) {
    size_t nfloat = r.report["float_fallback"].size();
    std::cout << "compiled " << a.model << " -> " << (fs::path(a.out_dir) / "model.fxp").string() << " ("
              << r.program.ops.size() << " ops, " << nfloat << " on the CPU in float; "
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
  c->add_option("--calib-method", a->calib_method, "Range estimation: percentile (default, 99.99th of |x|), minmax, mse, entropy");
  c->add_option("--scale-mode", a->scale_mode, "float (any scale, multiplier+shift) or pow2 (power-of-two scales)");
  c->add_flag("--qat", a->qat, "Use Clip/Relu6 ranges of a QAT model as quantization ranges");
  c->add_option("--bits16", a->bits16, "Layers at 16 bits: node names, output names, globs or op:TYPE (comma-separated)");
  c->add_option("--params16", a->params16, "Layers with 16-bit weights only (same syntax)");
  c->add_option("--shape", a->shapes, "Bind an input's shape, e.g. --shape x=1x3x48x320");
  c->add_flag("-q,--quiet", a->quiet, "No progress or summary lines");
  c->callback([a] { run_compile(*a); });
}

}  // namespace fixpoint::cli
