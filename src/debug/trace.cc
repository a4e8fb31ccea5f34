#include "fixpoint/trace.h"

#include <filesystem>
#include <fstream>

#include "fixpoint/npy.h"

namespace fixpoint {

TraceWriter::TraceWriter(const std::string& dir) : dir_(dir) {
  if (dir_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  FP_CHECK(!ec, "--trace '", dir_, "': ", ec.message());
}

void TraceWriter::add(const std::string& tensor, const std::string& node, const std::string& op, const Tensor& value,
         const Tensor* codes, const QParams& q) {
  if (!on() || tensor.empty() || !dtype_is_float(value.dtype())) return;
  std::string base = sanitize_name(tensor);
  auto f = channel_factors_.find(tensor);
  save_npy((std::filesystem::path(dir_) / (base + ".npy")).string(),
           f == channel_factors_.end() ? value : scaled_channels(value, f->second, true));
  nlohmann::json e = {{"file", base + ".npy"}, {"shape", value.shape()}, {"node", node}, {"op", op},
                      {"bits", q.bits()}, {"dtype", dtype_name(q.type)}, {"scale", q.scale}};
  if (f != channel_factors_.end()) e["channel_factors"] = f->second;  // codes = model value x factor / scale
  if (auto sg = subgraph_.find(node); sg != subgraph_.end()) e["subgraph"] = sg->second;
  if (codes) {
    save_npy((std::filesystem::path(dir_) / (base + ".codes.npy")).string(), *codes);
    e["codes"] = base + ".codes.npy";
  }
  index_[tensor] = e;
}

void TraceWriter::use_report(const std::string& program_dir) {
  std::ifstream f(std::filesystem::path(program_dir) / "compile_report.json");
  if (!on() || !f.good()) return;
  nlohmann::json rep = nlohmann::json::parse(f, nullptr, false);
  if (rep.is_discarded()) return;
  for (const auto& sg : rep.value("subgraphs", nlohmann::json::array()))
    for (const auto& n : sg["nodes"])
      subgraph_[n.get<std::string>()] = {{"id", sg["id"]}, {"kind", sg["kind"]}};
  removed_ = rep.value("removed_tensors", nlohmann::json::object());
}

TraceWriter::~TraceWriter() {
  if (!on()) return;
  for (const auto& [t, r] : removed_.items())
    if (!index_.contains(t))
      index_[t] = {{"removed", "fused or rewritten away at compile time"}, {"node", r["node"]}, {"op", r["op"]},
                   {"stand_in", r["stand_in"]}};
  std::ofstream(std::filesystem::path(dir_) / "index.json") << index_.dump(1) << "\n";
}

}  // namespace fixpoint
