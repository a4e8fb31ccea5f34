// The compile report.
#pragma once
#include "quantize/compile_context.h"

namespace fixpoint {

// The report of a finished compile and the program, moved out of cx.
CompileResult finish(CompileContext& cx);

}  // namespace fixpoint
