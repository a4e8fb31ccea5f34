// Compiling an in-memory graph with in-memory calibration samples, for the compiler tests.
#pragma once
#include <cstdio>
#include <filesystem>
#include <unistd.h>

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

// Saves g as a temporary ONNX file and compiles it with `opts` on `calib`.
inline CompileResult compile_graph(const Graph& g, const CompileOptions& opts,
                                   const std::vector<std::map<std::string, Tensor>>& calib) {
  std::string path = cat(std::filesystem::temp_directory_path().string(), "/fixpoint_compile_test_", getpid(), ".onnx");
  save_onnx(g, path);
  MemorySource src(calib);
  CompileResult r = compile_model(path, opts, &src);
  std::remove(path.c_str());
  return r;
}

}  // namespace fixpoint::test
