// --bias-correction.
#pragma once
#include "quantize/compile_context.h"

namespace fixpoint {

// Bias correction (Nagel et al., 2019) of every Conv/MatMul in cx.prog from a float run over calib.
void correct_biases(CompileContext& cx, const CalibrationSource& calib);

}  // namespace fixpoint
