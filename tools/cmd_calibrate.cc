// fixpoint calibrate MODEL.onnx --calib NAME=FILE.npy... -o STATS.fxs [--ranges-only | --ranges R.fxs...]
// Calibration statistics as a file: measured with the compile's options on some samples, merged
// by `fixpoint compile --stats a.fxs b.fxs ...`. A calibration sharded over machines is two
// rounds and gives exactly one pass's statistics: `--ranges-only` on every shard; then, with the
// ranges files of all shards, `--ranges r1.fxs r2.fxs ...` on every shard (histograms on the
// merged ranges); then `fixpoint compile --stats h1.fxs h2.fxs ...`.
#include <iostream>

#include "cli_common.h"
#include "compile_args.h"
#include "fixpoint/artifact.h"

namespace fixpoint::cli {
namespace {

struct CalibrateArgs {
  CompileArgs c;
  bool ranges_only = false;
  std::vector<std::string> ranges;
};

void run_calibrate(const CalibrateArgs& a, const CLI::App& app) {
  CompileJob job = job_from_args(a.c, app);
  FP_CHECK(!job.calib.empty(), "fixpoint calibrate needs --calib samples");
  FP_CHECK(!(a.ranges_only && !a.ranges.empty()), "--ranges-only measures ranges; --ranges measures histograms on "
           "given ranges: use one");
  if (!a.c.quiet) job.options.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  std::unique_ptr<CalibrationSource> calib = open_job_calibration(job);
  std::shared_ptr<CalibrationCache> stats;
  if (!a.ranges.empty()) {
    std::shared_ptr<CalibrationCache> merged = load_merged_calibration(a.ranges, "--ranges");
    stats = calibrate_model(a.c.model, job.options, *calib, CalibrationPart::kHistograms, merged.get());
  } else {
    stats = calibrate_model(a.c.model, job.options, *calib, a.ranges_only ? CalibrationPart::kRanges : CalibrationPart::kAll);
  }
  save_calibration(*stats, a.c.out_dir);
  if (!a.c.quiet) std::cout << "calibrated " << a.c.model << " -> " << a.c.out_dir << ": " << describe_calibration(*stats) << "\n";
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  CLI::App* c = app.add_subcommand("calibrate", "Measure calibration statistics (FILE.fxs) for `fixpoint compile --stats`");
  c->add_option("model", a->c.model, "ONNX model file")->required();
  c->add_option("-o,--output", a->c.out_dir, "Statistics file to write (.fxs)")->required();
  add_compile_options(c, a->c);
  auto* ro = c->add_flag("--ranges-only", a->ranges_only, "Sharded round 1: measure only min/max ranges");
  c->add_option("--ranges", a->ranges, "Sharded round 2: measure histograms on these ranges files (all shards', merged)")
      ->excludes(ro);
  c->add_flag("-q,--quiet", a->c.quiet, "No progress or summary lines");
  c->callback([a, c] { run_calibrate(*a, *c); });
}

}  // namespace fixpoint::cli
