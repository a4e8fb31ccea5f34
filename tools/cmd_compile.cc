// fixpoint compile MODEL.onnx -o DIR [--bits 8|16|32] [--calib NAME=FILE.npy]... [--qat] ...
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "compile_args.h"
#include "fixpoint/compile_job.h"

namespace fixpoint::cli {
namespace {

void run_compile(const CompileArgs& a, const CLI::App& app) {
  CompileJob job = job_from_args(a, app);
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
  add_compile_options(c, *a);
  c->add_flag("-q,--quiet", a->quiet, "No progress or summary lines");
  c->callback([a, c] { run_compile(*a, *c); });
}

}  // namespace fixpoint::cli
