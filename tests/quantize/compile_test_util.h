// Compiling an in-memory graph with in-memory calibration samples, for the compiler tests.
#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fixpoint/artifact.h"
#include "fixpoint/compiler.h"
#include "fixpoint/onnx_import.h"
#include "test_util.h"

namespace fixpoint::test {

class MemorySource : public CalibrationSource {
 public:
  explicit MemorySource(std::vector<std::map<std::string, Tensor>> s) : s_(std::move(s)) {}
  size_t size() const override { return s_.size(); }
  std::map<std::string, Tensor> sample(size_t i) const override { return s_[i]; }

 private:
  std::vector<std::map<std::string, Tensor>> s_;
};

// A file's bytes.
inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The artifact bytes of `p`, saved as DIR/model.fxp (what two compiles are compared by).
inline std::string artifact_bytes(const Program& p, const std::string& dir) {
  std::filesystem::create_directories(dir);
  save_program(p, dir + "/model.fxp");
  return read_bytes(dir + "/model.fxp");
}

// Compiles the in-memory graph g with `opts` on `calib` (no file on the way).
inline CompileResult compile_graph(const Graph& g, const CompileOptions& opts,
                                   const std::vector<std::map<std::string, Tensor>>& calib) {
  MemorySource src(calib);
  return fixpoint::compile_graph(g, "test graph", opts, &src);
}

}  // namespace fixpoint::test
