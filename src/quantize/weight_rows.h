// The float weights of a prepared Conv/Gemm/MatMul in the layout of its integer codes: one row of
// K per output channel (what bias correction and adaptive rounding compare the codes against).
#pragma once
#include "fixpoint/op_params.h"
#include "fixpoint/program.h"

namespace fixpoint {

// W[c][k] of the float weights `w` (the op's original initializer) for op's code row c.
inline double float_weight(const QOp& op, const Tensor& w, int64_t c, int64_t k, int64_t N, int64_t K) {
  if (op.node.op_type == "Conv") return w.get_f64(c * K + k);
  if (op.node.op_type == "Gemm") {
    double alpha = op.node.attr_float("alpha", 1.0f);
    return alpha * w.get_f64(op.node.attr_int("transB", 0) ? c * K + k : k * N + c);
  }
  return w.get_f64(k * N + c);  // MatMul B is K x N
}

}  // namespace fixpoint
