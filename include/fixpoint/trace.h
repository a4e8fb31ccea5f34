// fixpoint: traces (`run --trace DIR`): every computed tensor as float32 .npy (+ integer codes)
// and index.json. For a compiled program each entry also names its subgraph, and the tensors
// fusion or rewrites removed are listed with the program tensor that stands for them (from
// compile_report.json).
#pragma once
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "fixpoint/program.h"

namespace fixpoint {

class TraceWriter {
 public:
  explicit TraceWriter(const std::string& dir);  // empty: tracing off
  bool on() const { return !dir_.empty(); }
  // One computed tensor (float values; for fixed-point tensors also their codes and encoding).
  void add(const std::string& tensor, const std::string& node, const std::string& op, const Tensor& value,
           const Tensor* codes, const QParams& q);
  // Subgraphs and removed tensors of a compiled program (its compile_report.json).
  void use_report(const std::string& program_dir);
  // The program's rescaled channels (Program::channel_factors): their values are written in the
  // model's units, their codes in the program's.
  void use_program(const Program& p) { channel_factors_ = p.channel_factors; }
  ~TraceWriter();  // writes index.json

 private:
  std::string dir_;
  std::map<std::string, nlohmann::json> subgraph_;
  nlohmann::json removed_ = nlohmann::json::object();
  std::map<std::string, std::vector<double>> channel_factors_;
  nlohmann::json index_ = nlohmann::json::object();
};

}  // namespace fixpoint
