#include "fixpoint/model.h"

#include <iostream>

#include "fixpoint/float_kernels.h"
#include "fixpoint/parallel.h"
#include "fixpoint/passes.h"
#include "fixpoint/runtime.h"

namespace fixpoint {

Graph load_model(const std::string& path, const PipelineOptions& opts) {
  ImportOptions io;
  io.shapes = opts.shapes;
  io.shapes_origin = opts.shapes_origin;
  return simplify_model(import_onnx_file(path, io), opts);
}

Graph simplify_model(Graph g, const PipelineOptions& opts) {
  if (opts.before_passes) opts.before_passes(g);
  if (opts.optimize) {
    // Folding makes Reshape targets constant; re-inferred shapes then let more Shape nodes
    // fold. Alternate until nothing changes. Each round can unlock one more link of a chain
    // like Shape -> pad amounts -> Pad -> Shape (Swin-T's window padding and attention masks:
    // 28 rounds at 64x64, where a cap of 8 left 973 shape-arithmetic nodes on the CPU in 22
    // subgraphs); the cap only guards against passes that never settle.
    PassManager pm = PassManager::standard();
    for (int round = 0; round < 256; ++round) {
      PassLog log = pm.run(g);
      if (opts.verbose)
        for (const auto& line : log.lines) std::cerr << "pass " << line << "\n";
      if (log.lines.empty()) break;
      infer_shapes(g);
    }
  }
  return g;
}

std::map<std::string, Tensor> run_onnx_model(const std::string& path, const std::map<std::string, Tensor>& inputs,
                                             const PipelineOptions& opts) {
  PipelineOptions o = opts;
  if (o.shapes.empty())
    for (const auto& [name, t] : inputs) o.shapes[name] = t.shape();
  if (opts.shapes.empty()) o.shapes_origin = "input";
  Executor ex(load_model(path, o), fast_float_kernels());
  RunOptions ro;
  ro.threads = default_threads();
  return ex.run(inputs, ro);
}

}  // namespace fixpoint
