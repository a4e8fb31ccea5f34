// Encoding choice (docs/arithmetic.md §2): code types, scales and zero points.
#pragma once
#include <limits>
#include <string>
#include <utility>

#include "fixpoint/fixedpoint.h"
#include "quantize/compile_context.h"

namespace fixpoint {

// The code type of a tensor of `bits` (8 or 16): unsigned when it is never negative; 32: int32
// (§2.7's residual stream of 16-bit programs).
DType code_type(int bits, bool non_negative);

// The real values a code type and zero point can represent: [(q_min - z) s, (q_max - z) s].
std::pair<double, double> real_range(const QParams& q);

// (7), (8): the scale that maps [-hi, hi] (or [0, hi]) onto the codes of t.
double activation_scale(double hi, DType t, bool pow2);

// (9): the scale of weights with largest magnitude absmax.
double weight_scale(double absmax, DType t, bool pow2);

bool is_pow2(double v);

// Quantization of float tensor t produced at `bits`: a QDQ model's own encoding (§2.6), else its
// QAT range, else its calibrated range, clipped by the calibration method (8-bit only), on an
// exact input grid (7a), or asymmetric (8a)-(8b).
QParams activation_qparams(CompileContext& cx, const std::string& t, int bits);

// §2.6: in an imported QDQ model, a float activation t that no QuantizeLinear/DequantizeLinear
// pair covers stays float, as ONNX Runtime runs it (calibration never gives it codes).
bool qdq_leaves_float(const CompileContext& cx, const std::string& t);

// Quantization of a float constant operand (symmetric, its full range).
QParams const_qparams(CompileContext& cx, const std::string& name, int bits);

// Binary/Concat operands that are float constants become constant code tensors of their own
// (op.const_inputs); false when one is not a float constant.
bool quantize_const_inputs(CompileContext& cx, QOp& op, size_t count);

// [lo, hi] of output codes with a fused activation (docs/arithmetic.md §5.1).
void set_clamp(params::Clamp& op, const QParams& qy, double lo = -std::numeric_limits<double>::infinity(),
               double hi = std::numeric_limits<double>::infinity());

}  // namespace fixpoint
