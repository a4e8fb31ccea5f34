// Graphviz rendering of a compile report. Layout choices for big graphs (300+ nodes): top to
// bottom, one cluster per subgraph, short labels (op, kind, width; ONNX node names beyond the
// first three summarized as "+N more").
#include "fixpoint/graph_dot.h"

#include <map>
#include <set>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "fixpoint/error.h"

namespace fixpoint {
namespace {

using json = nlohmann::json;

std::string esc(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (c == '\n') {
      r += "\\n";
      continue;
    }
    r += c;
  }
  return r;
}

}  // namespace

std::string compile_report_dot(const json& report, const std::map<std::string, std::string>& fill) {
  std::ostringstream d;
  d << "digraph fixpoint {\n  rankdir=TB; nodesep=0.15; ranksep=0.25;\n"
    << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=9, margin=\"0.06,0.03\"];\n"
    << "  edge [fontname=\"Helvetica\", fontsize=7, color=\"#555555\"];\n";
  // ONNX nodes each rewrite touched, by the node that survived it.
  std::map<std::string, std::set<std::string>> origins;
  for (const auto& r : report.value("rewrites", json::array())) {
    const auto& nodes = r.value("nodes", json::array());
    for (const auto& n : nodes)
      for (const auto& m : nodes) origins[n.get<std::string>()].insert(m.get<std::string>());
  }
  std::map<std::string, int> group_of;  // op name -> subgraph id
  std::map<int, std::string> kind_of;
  for (const auto& sg : report.value("subgraphs", json::array())) {
    kind_of[sg["id"].get<int>()] = sg["kind"].get<std::string>();
    for (const auto& n : sg["nodes"]) group_of[n.get<std::string>()] = sg["id"].get<int>();
  }
  std::map<std::string, std::string> producer;  // tensor -> op id
  std::map<std::string, json> tensor_info;
  std::map<int, std::vector<std::string>> cluster_nodes;
  const auto& layers = report.value("layers", json::array());
  for (size_t i = 0; i < layers.size(); ++i) {
    const json& l = layers[i];
    std::string id = "op" + std::to_string(i), name = l["name"].get<std::string>();
    bool acc = l["kind"].get<std::string>() != "float";
    std::set<std::string> from = origins.count(name) ? origins[name] : std::set<std::string>{};
    for (const auto& f : l.value("fused", json::array())) from.insert(f.get<std::string>());
    from.erase(name);
    std::ostringstream label;
    label << l["op"].get<std::string>() << "  [" << (acc ? l["kind"].get<std::string>() + " " + std::to_string(l["bits"].get<int>()) + "b" : "CPU float") << "]\\n" << esc(name);
    int shown = 0;
    for (const auto& f : from) {
      if (shown == 3) {
        label << "\\n+" << (from.size() - 3) << " more";
        break;
      }
      label << "\\n+ " << esc(f);
      ++shown;
    }
    std::string color = acc ? "#cfe8ff" : "#ffd9b3";
    if (auto f = fill.find(name); f != fill.end()) color = f->second;
    std::ostringstream node;
    node << "    " << id << " [label=\"" << label.str() << "\", fillcolor=\"" << color << "\"";
    if (!acc && l.contains("reason")) node << ", tooltip=\"" << esc(l["reason"].get<std::string>()) << "\"";
    node << "];\n";
    int g = group_of.count(name) ? group_of[name] : -1;
    cluster_nodes[g].push_back(node.str());
    for (const auto& o : l.value("outputs", json::array())) {
      producer[o["tensor"].get<std::string>()] = id;
      tensor_info[o["tensor"].get<std::string>()] = o;
    }
  }
  for (const auto& [g, nodes] : cluster_nodes) {
    if (g >= 0) {
      bool acc = kind_of[g] == "accelerator";
      d << "  subgraph cluster_" << g << " {\n    label=\"#" << g << " " << (acc ? "accelerator (fixed point)" : "CPU (float)")
        << "\"; fontname=\"Helvetica\"; fontsize=10; style=filled; color=\"" << (acc ? "#3b7dd8" : "#d8843b")
        << "\"; fillcolor=\"" << (acc ? "#eef6ff" : "#fff3e6") << "\";\n";
    }
    for (const auto& n : nodes) d << n;
    if (g >= 0) d << "  }\n";
  }
  // Graph inputs and edges.
  std::map<std::string, std::string> input_ids;
  for (size_t i = 0; i < layers.size(); ++i) {
    const json& l = layers[i];
    for (const auto& in : l.value("inputs", json::array())) {
      std::string t = in["tensor"].get<std::string>(), from;
      auto p = producer.find(t);
      if (p != producer.end()) {
        from = p->second;
      } else {
        if (t.find("/quantized_") != std::string::npos) continue;  // a constant operand
        auto [it, fresh] = input_ids.emplace(t, "in" + std::to_string(input_ids.size()));
        from = it->second;
        if (fresh) d << "  " << from << " [label=\"" << esc(t) << "\", shape=ellipse, fillcolor=\"#eeeeee\"];\n";
      }
      const json& ti = tensor_info.count(t) ? tensor_info[t] : in;
      std::string lab = ti.value("shape", std::string()) + (ti.contains("shape") ? " " : "") + ti.value("dtype", std::string());
      d << "  " << from << " -> op" << i << " [label=\"" << esc(lab) << "\"];\n";
    }
  }
  d << "}\n";
  return d.str();
}

std::string render_svg(const std::string& dot_text, const std::string& scratch_path) {
  FP_CHECK(scratch_path.find('\'') == std::string::npos, "'", scratch_path, "': quotes are not allowed in the file name");
  std::string dot_path = scratch_path + ".dot", svg_path = scratch_path + ".svg";
  std::ofstream(dot_path) << dot_text;
  std::string cmd = "dot -Tsvg '" + dot_path + "' -o '" + svg_path + "' 2>/dev/null";
  int rc = std::system(cmd.c_str());
  std::remove(dot_path.c_str());
  FP_CHECK(rc == 0, "Graphviz 'dot' failed on '", dot_path, "' (is graphviz installed? scripts/setup.sh installs it)");
  std::ifstream f(svg_path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::remove(svg_path.c_str());
  return ss.str();
}

}  // namespace fixpoint
