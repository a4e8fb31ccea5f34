// Prepare steps (tflite-micro's "prepare"): for one op the accelerator runs, compute every
// constant its integer kernel needs (multipliers, shifts, tables, weight codes) into its typed
// params (include/fixpoint/op_params.h) and set the quantization of its outputs. One file per
// op kind; registry.cc maps ONNX op types to them.
#pragma once
#include <string>
#include <vector>

#include "quantize/compile_context.h"
#include "quantize/encoding.h"
#include "quantize/width_policy.h"

namespace fixpoint {

// Returns false (changing nothing in the program) when this kind cannot take op: the next step
// registered for its op type is tried, and when none can, the op runs in float on the CPU.
using PrepareFn = bool (*)(CompileContext& cx, QOp& op);

// The prepare steps for an ONNX op type, in the order they are tried (empty: none).
const std::vector<PrepareFn>& prepare_steps(const std::string& op_type);

bool prepare_matmul_like(CompileContext& cx, QOp& op);   // weighted.cc: Conv, ConvTranspose, Gemm, MatMul
bool prepare_matmul2(CompileContext& cx, QOp& op);       // matmul2.cc
bool prepare_binary(CompileContext& cx, QOp& op);        // binary.cc: Add, Sub, Mul, Div
bool prepare_concat(CompileContext& cx, QOp& op);        // concat.cc
bool prepare_prelu(CompileContext& cx, QOp& op);         // prelu.cc
bool prepare_reduce(CompileContext& cx, QOp& op);        // reduce.cc: ReduceSum, ReduceMean
bool prepare_avgpool(CompileContext& cx, QOp& op);       // avgpool.cc
bool prepare_global_max_pool(CompileContext& cx, QOp& op);  // global_max_pool.cc
bool prepare_softmax(CompileContext& cx, QOp& op);       // softmax.cc
bool prepare_layernorm(CompileContext& cx, QOp& op);     // normalize.cc
bool prepare_instancenorm(CompileContext& cx, QOp& op);  // normalize.cc
bool prepare_resize_linear(CompileContext& cx, QOp& op);  // resize_linear.cc
bool prepare_move(CompileContext& cx, QOp& op);          // move.cc: data movement, nearest Resize, Pad
bool prepare_lut(CompileContext& cx, QOp& op);           // table.cc: one-input elementwise functions

// reduce.cc, shared by the means and sums (19), (31): the output encoding *qy (unsigned when the
// input is) and M = s_x / s_y as *mu; false when the input has no codes or M is out of range.
bool prepare_sum_encoding(CompileContext& cx, QOp& op, QParams* qy, fx::Multiplier* mu);

// (20a): the curve (fx::TableCurve as params::Table::curve) of node n's table when n is a
// HardSwish or HardSigmoid followed by h -> a1 h + a0, if it gives the table's code for every
// input code away from a rounding boundary; else an empty tensor.
Tensor table_curve(const Node& n, double a1, double a0, const QParams& qx, const QParams& qy, const Tensor& table,
                   int64_t in_lo);

}  // namespace fixpoint
