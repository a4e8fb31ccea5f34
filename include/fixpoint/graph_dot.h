// fixpoint: the compiled graph as a Graphviz DOT picture (fixpoint inspect DIR --svg).
#pragma once
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace fixpoint {

// DOT text for a compile report (compile_report.json): one box per program op, clustered and
// colored by subgraph kind (accelerator / CPU), labelled with the ONNX nodes it stands for
// (fused activations and rewritten patterns), edges labelled with shape and code type.
// `fill` (optional) overrides the box color per op name (compare colors boxes by SNR).
std::string compile_report_dot(const nlohmann::json& report, const std::map<std::string, std::string>& fill = {});

// Runs Graphviz `dot -Tsvg` on DOT text; returns the SVG, or fails with one clear line.
std::string render_svg(const std::string& dot_text, const std::string& scratch_path);

}  // namespace fixpoint
