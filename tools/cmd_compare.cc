// fixpoint compare DIR --input NAME=FILE.npy... [--input ...] [-o OUTDIR] [--report report.html]
// Float reference vs the fixed-point program, layer by layer (docs/debugging.md).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli_common.h"
#include "fixpoint/compare.h"
#include "fixpoint/graph_dot.h"

namespace fixpoint::cli {
namespace {

struct CompareArgs {
  std::string dir, out_dir = "compare_out", report;
  std::vector<std::string> inputs;
  bool quiet = false;
};

void run_compare(const CompareArgs& a) {
  namespace fs = std::filesystem;
  FP_CHECK(fs::is_directory(a.dir), "'", a.dir, "': compare needs the folder `fixpoint compile -o DIR` wrote");
  Comparer cmp(a.dir);
  std::vector<std::map<std::string, Tensor>> sets = load_input_sets(a.inputs, cmp.program().inputs);
  for (size_t i = 0; i < sets.size(); ++i) {
    if (!a.quiet) std::cerr << "compare: input set " << i + 1 << "/" << sets.size() << "\n";
    cmp.add_sample(sets[i]);
  }
  nlohmann::json r = cmp.result();
  std::error_code ec;
  fs::create_directories(a.out_dir, ec);
  FP_CHECK(!ec, "-o '", a.out_dir, "': ", ec.message());
  std::ofstream(fs::path(a.out_dir) / "compare.json") << r.dump(1) << "\n";
  if (!a.report.empty()) {
    // The compiled graph colored by SNR, when Graphviz is there (it is optional for a report).
    std::string graph;
    std::ifstream rf(fs::path(a.dir) / "compile_report.json");
    nlohmann::json rep = nlohmann::json::parse(rf, nullptr, false);
    if (!rep.is_discarded()) {
      try {
        graph = render_svg(compile_report_dot(rep, snr_colors(r)), a.report + ".graph");
      } catch (const Error& e) {
        std::cerr << "compare: no graph in the report: " << e.what() << "\n";
      }
    }
    std::ofstream h(a.report);
    FP_CHECK(h.good(), "--report '", a.report, "': cannot write");
    h << compare_html(r, cmp.layers(), graph);
  }
  if (!a.quiet) std::cout << compare_table(r);
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
  CLI::App* c = app.add_subcommand("compare", "Float reference vs fixed-point program, layer by layer: SNR, local vs accumulated error, worst layers");
  c->add_option("dir", a->dir, "Folder written by `fixpoint compile`")->required();
  c->add_option("--input", a->inputs, "NAME=FILE.npy; repeat a NAME for another input set (results are pooled)")->required();
  c->add_option("-o,--output-dir", a->out_dir, "Folder for compare.json (default compare_out)");
  c->add_option("--report", a->report, "Also write a self-contained HTML report");
  c->add_flag("-q,--quiet", a->quiet, "No table on stdout");
  c->callback([a] { run_compare(*a); });
}

}  // namespace fixpoint::cli
