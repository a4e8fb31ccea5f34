#include "fixpoint/model.h"

#include <iostream>

#include "fixpoint/passes.h"
#include "fixpoint/runtime.h"

namespace fixpoint {

Graph load_model(const std::string& path, const PipelineOptions& opts) {
  ImportOptions io;
  io.shapes = opts.shapes;
  io.shapes_origin = opts.shapes_origin;
  Graph g = import_onnx_file(path, io);
  if (opts.optimize) {
    PassManager pm = PassManager::standard();
    PassLog log = pm.run(g);
    if (!log.lines.empty()) infer_shapes(g);
    if (opts.verbose)
      for (const auto& line : log.lines) std::cerr << "pass " << line << "\n";
  }
  return g;
}

std::map<std::string, Tensor> run_onnx_model(const std::string& path, const std::map<std::string, Tensor>& inputs,
                                             const PipelineOptions& opts) {
  PipelineOptions o = opts;
  if (o.shapes.empty())
    for (const auto& [name, t] : inputs) o.shapes[name] = t.shape();
  if (opts.shapes.empty()) o.shapes_origin = "input";
  Executor ex(load_model(path, o));
  return ex.run(inputs);
}

}  // namespace fixpoint
