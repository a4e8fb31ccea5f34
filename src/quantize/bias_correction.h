// Bias correction (--no-bias-correction turns it off).
#pragma once
#include "quantize/compile_context.h"

namespace fixpoint {

// Bias correction (Nagel et al., 2019) of every Conv/MatMul in cx.prog from the per-channel
// input means calibration measured (cx.channels); logs what it did or why it did not.
void correct_biases(CompileContext& cx);

}  // namespace fixpoint
