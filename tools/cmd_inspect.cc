// fixpoint inspect MODEL.onnx [--shape NAME=SHAPE]... [--json]
// fixpoint inspect DIR [--svg FILE.svg]: a compiled program's report, and its graph as a picture.
#include <iomanip>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "fixpoint/graph_dot.h"
#include "fixpoint/inspect.h"
#include "fixpoint/model.h"

namespace fixpoint::cli {
namespace {

struct InspectArgs {
  std::string model;
  std::vector<std::string> shapes;
  bool json = false;
  bool raw = false;
  std::string svg;
};

// DIR holds model.fxp + compile_report.json from `fixpoint compile`.
void inspect_program_dir(const InspectArgs& a) {
  namespace fs = std::filesystem;
  fs::path rp = fs::path(a.model) / "compile_report.json";
  std::ifstream f(rp);
  FP_CHECK(f.good(), "'", a.model, "': no compile_report.json in this folder (is it a `fixpoint compile` output?)");
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    fail("'", rp.string(), "': not valid JSON (", e.what(), ")");
  }
  if (a.svg.empty()) {
    std::ifstream t(fs::path(a.model) / "compile_report.txt");
    std::cout << t.rdbuf();
    return;
  }
  std::string svg = render_svg(compile_report_dot(report), a.svg + ".tmp");
  std::ofstream out(a.svg);
  FP_CHECK(out.good(), "--svg '", a.svg, "': cannot write");
  out << svg;
  if (!a.json) std::cout << "wrote " << a.svg << "\n";
}

std::string with_commas(int64_t v) {
  std::string s = std::to_string(v);  // appended, not inserted: g++ 12 warns on string::insert (-Wrestrict)
  size_t sign = v < 0 ? 1 : 0, n = s.size() - sign;
  std::string out = s.substr(0, sign);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += s[sign + i];
  }
  return out;
}

void run_inspect(const InspectArgs& a) {
  if (std::filesystem::is_directory(a.model)) return inspect_program_dir(a);
  FP_CHECK(a.svg.empty(), "--svg draws a compiled program: give the folder `fixpoint compile -o DIR` wrote, not '", a.model, "'");
  PipelineOptions po;
  po.shapes = parse_shape_options(a.shapes);
  po.optimize = !a.raw;
  Graph g = load_model(a.model, po);
  ModelStats st = model_stats(g);
  if (a.json) {
    nlohmann::json j;
    j["model"] = a.model;
    for (const auto& [dom, v] : g.opsets) j["opsets"][dom.empty() ? "ai.onnx" : dom] = v;
    for (const auto& in : g.inputs)
      j["inputs"].push_back({{"name", in.name}, {"dtype", dtype_name(in.dtype)}, {"shape", in.shape_text()}});
    for (const auto& out : g.outputs) {
      const ValueInfo* vi = g.info(out.name);
      j["outputs"].push_back({{"name", out.name}, {"dtype", dtype_name(vi ? vi->dtype : out.dtype)},
                              {"shape", vi ? vi->shape_text() : "?"}});
    }
    j["op_counts"] = st.op_counts;
    j["parameters"] = st.params;
    j["macs"] = st.macs;
    j["macs_complete"] = st.macs_complete;
    for (const auto& l : st.layers)
      j["layers"].push_back({{"name", l.name}, {"op", l.op}, {"output", l.output}, {"output_shape", l.output_shape},
                             {"params", l.params}, {"macs", l.macs_known ? nlohmann::json(l.macs) : nlohmann::json()}});
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "model: " << a.model << "\n";
  std::cout << "opsets:";
  for (const auto& [dom, v] : g.opsets) std::cout << " " << (dom.empty() ? "ai.onnx" : dom) << "=" << v;
  std::cout << "\n\ninputs:\n";
  for (const auto& in : g.inputs) std::cout << "  " << in.name << "  " << dtype_name(in.dtype) << "[" << in.shape_text() << "]\n";
  std::cout << "outputs:\n";
  for (const auto& out : g.outputs) {
    const ValueInfo* vi = g.info(out.name);
    std::cout << "  " << out.name << "  " << dtype_name(vi ? vi->dtype : out.dtype) << "[" << (vi ? vi->shape_text() : "?")
              << "]\n";
  }
  std::cout << "\nnodes: " << g.nodes.size() << "   parameters: " << with_commas(st.params)
            << "   MACs: " << with_commas(st.macs) << (st.macs_complete ? "" : " (some shapes unknown; bind with --shape)")
            << "\nop counts:";
  for (const auto& [op, c] : st.op_counts) std::cout << " " << op << "=" << c;
  std::cout << "\n\n";
  size_t wn = 4, wo = 2;
  for (const auto& l : st.layers) {
    wn = std::max(wn, std::min<size_t>(48, l.name.size()));
    wo = std::max(wo, l.op.size());
  }
  std::cout << std::left << std::setw(static_cast<int>(wn)) << "node" << "  " << std::setw(static_cast<int>(wo)) << "op"
            << "  " << std::setw(20) << "output shape" << std::right << std::setw(12) << "params" << std::setw(16) << "MACs"
            << "\n";
  for (const auto& l : st.layers) {
    std::string nm = l.name.size() > 48 ? l.name.substr(0, 45) + "..." : l.name;
    std::cout << std::left << std::setw(static_cast<int>(wn)) << nm << "  " << std::setw(static_cast<int>(wo)) << l.op << "  "
              << std::setw(20) << l.output_shape << std::right << std::setw(12) << (l.params ? with_commas(l.params) : "")
              << std::setw(16) << (l.macs_known ? (l.macs ? with_commas(l.macs) : "") : "?") << "\n";
  }
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto a = std::make_shared<InspectArgs>();
  CLI::App* c = app.add_subcommand("inspect", "Show a model's inputs, outputs, op counts, parameters and MACs per layer");
  c->add_option("model", a->model, "ONNX model file, or a folder written by `fixpoint compile`")->required();
  c->add_option("--svg", a->svg, "Draw the compiled graph (subgraphs, fused nodes, shapes, widths) with Graphviz");
  c->add_option("--shape", a->shapes, "Bind an input's shape, e.g. --shape x=1x3x224x224 (repeatable)");
  c->add_flag("--json", a->json, "Print JSON instead of a table");
  c->add_flag("--raw", a->raw, "Show the graph as imported (no simplification passes)");
  c->callback([a] { run_inspect(*a); });
}

}  // namespace fixpoint::cli
