// fixpoint: ONNX model import on ONNX's own protobuf definitions and shape inference.
#pragma once
#include <map>
#include <string>

#include "fixpoint/ir.h"

namespace fixpoint {

// Input name -> concrete shape. Binds dynamic dims (e.g. "p2o.DynamicDimension.0").
using ShapeBindings = std::map<std::string, Shape>;

struct ImportOptions {
  ShapeBindings shapes;
  bool infer_shapes = true;  // run ONNX shape inference (with data propagation)
  // How shape bindings are named in errors ("--shape" or "input"); with "input", a binding
  // for a name the model does not have is ignored (the executor reports unknown inputs).
  std::string shapes_origin = "--shape";
};

// Loads MODEL.onnx (external data files are read relative to its folder).
Graph import_onnx_file(const std::string& path, const ImportOptions& opts = {});
// Loads a serialized ModelProto; `origin` names it in errors, `base_dir` holds external data.
Graph import_onnx_bytes(const std::string& bytes, const std::string& origin, const std::string& base_dir,
                        const ImportOptions& opts = {});
// Re-runs ONNX shape inference (with data propagation) on the IR and refreshes value_info:
// after constant folding, Reshape targets are constants and shapes downstream become known.
void infer_shapes(Graph& g);

// Writes the IR as an ONNX model file (all initializers with data).
void save_onnx(const Graph& g, const std::string& path);

// Reads a serialized TensorProto file (ONNX backend test data: input_0.pb, output_0.pb).
Tensor load_tensor_pb(const std::string& path);
// Parses "1x3x48x320" (also "1,3,48,320"); throws naming `what` on bad text.
Shape parse_shape(const std::string& text, const std::string& what);

}  // namespace fixpoint
