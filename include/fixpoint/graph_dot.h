// fixpoint: the compiled graph as a Graphviz DOT picture (fixpoint inspect DIR --svg).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace fixpoint {

// DOT text for a compile report (compile_report.json): one box per program op, clustered and
// colored by subgraph kind (accelerator / CPU), labelled with the ONNX nodes it stands for
// (fused activations and rewritten patterns), edges labelled with shape and code type.
std::string compile_report_dot(const nlohmann::json& report);

}  // namespace fixpoint
