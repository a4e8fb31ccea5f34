// Compiling an in-memory graph with in-memory calibration samples, for the compiler tests.
#pragma once
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

// Compiles the in-memory graph g with `opts` on `calib` (no file on the way).
inline CompileResult compile_graph(const Graph& g, const CompileOptions& opts,
                                   const std::vector<std::map<std::string, Tensor>>& calib) {
  MemorySource src(calib);
  return fixpoint::compile_graph(g, "test graph", opts, &src);
}

}  // namespace fixpoint::test
