// fixpoint export-qdq DIR -o MODEL.onnx: the compiled program as a standard ONNX QDQ model
// (docs/debugging.md "QDQ export").
#include <filesystem>
#include <iostream>

#include "cli_common.h"
#include "fixpoint/artifact.h"
#include "fixpoint/qdq_export.h"

namespace fixpoint::cli {
namespace {

struct ExportArgs {
  std::string dir, out;
  bool quiet = false;
};

void run_export(const ExportArgs& a) {
  namespace fs = std::filesystem;
  FP_CHECK(fs::is_directory(a.dir), "'", a.dir, "': export-qdq needs the folder `fixpoint compile -o DIR` wrote");
  Program p = load_program((fs::path(a.dir) / "model.fxp").string());
  Graph g = qdq_graph(p);
  save_onnx(g, a.out);
  if (!a.quiet) {
    size_t pairs = std::count_if(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.op_type == "QuantizeLinear"; });
    std::cout << "export-qdq: " << a.out << ": " << g.nodes.size() << " nodes, " << pairs
              << " QuantizeLinear/DequantizeLinear pairs, opset " << g.opsets.at("") << "\n";
  }
}

}  // namespace

void add_export_qdq_command(CLI::App& app) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* c = app.add_subcommand("export-qdq", "Write the compiled program as an ONNX QDQ model (its scales, zero "
                                   "points, widths and float fallbacks) that ONNX Runtime runs");
  c->add_option("dir", a->dir, "Folder written by `fixpoint compile`")->required();
  c->add_option("-o,--output", a->out, "The .onnx file to write")->required();
  c->add_flag("-q,--quiet", a->quiet, "No summary line");
  c->callback([a] { run_export(*a); });
}

}  // namespace fixpoint::cli
