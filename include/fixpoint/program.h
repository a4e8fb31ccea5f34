// fixpoint: a compiled fixed-point program: ops with prepared integer constants (the
// tflite-micro "prepare" step done at compile time) and the quantization of every tensor.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fixpoint/fixedpoint.h"
#include "fixpoint/ir.h"
#include "fixpoint/op_params.h"

namespace fixpoint {

// Quantization of one tensor, docs/arithmetic.md (1). type Float32 = a float tensor.
struct QParams {
  DType type = DType::Float32;
  double scale = 1.0;
  int64_t zero_point = 0;
  // (5b): codes made from float values (graph inputs, float fallback outputs) round as ONNX's
  // QuantizeLinear (half to even, in float32): set for the encodings an imported QDQ model's
  // own pairs define, so the program quantizes where the model does, as the model does.
  bool onnx_rounding = false;
  bool is_float() const { return type == DType::Float32; }
  // (5) or (5b) of one float value.
  int64_t quantize(double r) const {
    fx::Range rg = fx::range_of(type);
    return onnx_rounding ? fx::quantize_onnx(static_cast<float>(r), static_cast<float>(scale), zero_point, rg)
                         : fx::quantize(r, scale, zero_point, rg);
  }
  int bits() const { return is_float() ? 32 : static_cast<int>(dtype_size(type) * 8); }
};

// One step of the program. `params` (include/fixpoint/op_params.h) selects the integer kernel and
// holds what its prepare step made; params::Float runs the float reference kernel of `node` on
// dequantized inputs and quantizes its outputs (CPU fallback).
struct QOp {
  Node node;                        // op_type, attributes, input/output tensor names
  std::vector<std::string> fused;   // ONNX nodes folded into this op (e.g. a Relu after a Conv)
  std::string reason;               // for params::Float: why it is not run in fixed point
  int bits = 8;
  OpParams params;                  // the kind and its prepared constants
  std::map<size_t, Tensor> const_inputs;  // constant operands quantized at compile time, by input index

  std::string_view kind() const { return kind_name(params); }
  template <class P> bool is() const { return std::holds_alternative<P>(params); }
  // The params of kind P (the caller dispatched on the kind; a mismatch is a program error).
  template <class P> const P& as() const {
    const P* p = std::get_if<P>(&params);
    FP_CHECK(p, node.label(), ": program op of kind '", kind(), "' read as '", P::kKind, "'");
    return *p;
  }
  template <class P> P& as() { return const_cast<P&>(static_cast<const QOp&>(*this).as<P>()); }
};

struct Program {
  // 3: 8-bit weights stored as int8; means (reduce, avgpool) carry M = s_x / s_y and divide by
  // the count exactly (31);
  // 2: typed op params (op_params.h) with a validated schema; 1: string-keyed ints/consts.
  // 4: encodings carry onnx_rounding ((5b), QDQ imports); 5: tables carry a curve (20a).
  // 6: channel_factors. 7: tensor bytes after the CBOR document (src/artifact/artifact.cc).
  static constexpr int kFormatVersion = 7;
  std::string source_model;
  std::string scale_mode = "float";  // or "pow2"
  std::string rounding = "half_up";  // docs/arithmetic.md (2)
  int bits = 8;                      // default width (32 = float reference)
  std::vector<ValueInfo> inputs, outputs;  // float-facing interface (shapes may be symbolic)
  std::map<std::string, Tensor> float_constants;  // constants float fallback ops read
  std::map<std::string, QParams> tensors;         // every tensor the program computes
  // Tensors channel equalization rescaled ((7d)): the program's channel c (axis 1) is the
  // model's times factor[c]. Debugging tools compare in the program's units through these.
  std::map<std::string, std::vector<double>> channel_factors;
  std::vector<QOp> ops;
};

}  // namespace fixpoint
