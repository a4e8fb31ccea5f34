// fixpoint: the float reference pipeline used by `fixpoint run`: import, bind shapes from the
// given inputs, simplify with the standard passes, execute.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "fixpoint/ir.h"
#include "fixpoint/onnx_import.h"

namespace fixpoint {

struct PipelineOptions {
  ShapeBindings shapes;   // from --shape, or from the inputs' shapes
  std::string shapes_origin = "--shape";
  bool optimize = true;   // run the standard simplification passes
  bool verbose = false;   // log what each pass changed to stderr
  std::function<void(Graph&)> before_passes;  // optional: sees the imported graph before any pass
};

// Import MODEL.onnx and run the standard passes.
Graph load_model(const std::string& path, const PipelineOptions& opts = {});
// The same for a graph already imported (opts.shapes are not used: shapes bind at import).
Graph simplify_model(Graph g, const PipelineOptions& opts = {});

// `fixpoint run` for an ONNX model: input shapes bind the model's dynamic dims.
std::map<std::string, Tensor> run_onnx_model(const std::string& path, const std::map<std::string, Tensor>& inputs,
                                             const PipelineOptions& opts = {});

}  // namespace fixpoint
