// --qat (docs/arithmetic.md §2.3).
#pragma once
#include "quantize/compile_context.h"

namespace fixpoint {

// A Clip/Relu6 range is the range of the tensor it bounds; a graph input read only by such a
// Clip takes its range. Fills cx.qat_ranges.
void collect_qat_ranges(CompileContext& cx);

}  // namespace fixpoint
