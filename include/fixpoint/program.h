// fixpoint: a compiled fixed-point program: ops with prepared integer constants (the
// tflite-micro "prepare" step done at compile time) and the quantization of every tensor.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "fixpoint/ir.h"

namespace fixpoint {

// Quantization of one tensor, docs/arithmetic.md (1). type Float32 = a float tensor.
struct QParams {
  DType type = DType::Float32;
  double scale = 1.0;
  int64_t zero_point = 0;
  bool is_float() const { return type == DType::Float32; }
  int bits() const { return is_float() ? 32 : static_cast<int>(dtype_size(type) * 8); }
};

// One step of the program. `kind` selects the integer kernel; "float" runs the float reference
// kernel of `node` on dequantized inputs and quantizes its outputs (CPU fallback).
struct QOp {
  std::string kind;
  Node node;                        // op_type, attributes, input/output tensor names
  std::vector<std::string> fused;   // ONNX nodes folded into this op (e.g. a Relu after a Conv)
  std::string reason;               // for "float": why it is not run in fixed point
  int bits = 8;
  std::map<std::string, Tensor> consts;  // prepared: weight, bias, mult, shift, table, ...
  std::map<std::string, int64_t> ints;   // prepared scalars: lo, hi, L, ...
};

struct Program {
  static constexpr int kFormatVersion = 1;
  std::string source_model;
  std::string scale_mode = "float";  // or "pow2"
  std::string rounding = "half_up";  // docs/arithmetic.md (2)
  int bits = 8;                      // default width (32 = float reference)
  std::vector<ValueInfo> inputs, outputs;  // float-facing interface (shapes may be symbolic)
  std::map<std::string, Tensor> float_constants;  // constants float fallback ops read
  std::map<std::string, QParams> tensors;         // every tensor the program computes
  std::vector<QOp> ops;
};

// Writes/reads DIR/model.fxp: magic, format version, CBOR payload, CRC-32 checksum.
void save_program(const Program& p, const std::string& path);
Program load_program(const std::string& path);

}  // namespace fixpoint
