// fixpoint: a compiled program as a standard ONNX QDQ model (fixpoint export-qdq,
// Program.export_qdq), docs/debugging.md "QDQ export".
#pragma once
#include <string>

#include "fixpoint/ir.h"
#include "fixpoint/program.h"

namespace fixpoint {

// The program's quantization as an ONNX graph ONNX Runtime runs: every tensor with codes gets
// QuantizeLinear -> DequantizeLinear with its scale, zero point and width; weights are the
// program's codes through a per-channel DequantizeLinear, biases its int32 codes at s_x s_w;
// a fused activation is a Clip on the codes' real bounds; float fallback ops stay float. Ops
// keep the model's opset; ops a fusion pass made that the opset lacks (HardSwish,
// LayerNormalization, Gelu) are written out in the opset's ops. Q/DQ are ONNX's own when the
// opset has them (13+) and the width is 8; else com.microsoft's (16 bits, older opsets).
Graph qdq_graph(const Program& p);

// qdq_graph written to `path` as an .onnx file.
void export_qdq(const Program& p, const std::string& path);

}  // namespace fixpoint
