// Adaptive weight rounding (--adaptive-rounding; docs/arithmetic.md (10c)).
#pragma once
#include "quantize/compile_context.h"

namespace fixpoint {

// For every 8-bit Conv/Gemm/MatMul in cx.prog with float weights (not a QDQ model's codes):
// chooses each weight code between floor and ceil of w / s_w (instead of the nearest) to
// minimize the layer's output error on the calibration samples, sum over positions of
// ((W_q - W) x)^2 = dW^T H dW with H = sum x x^T of the layer's float input patches; by greedy
// coordinate descent per output channel. Logs what it did (rewrites "adaptive_rounding").
void round_weights_adaptively(CompileContext& cx, const CalibrationSource& calib);

}  // namespace fixpoint
