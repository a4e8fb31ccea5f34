// --qat (docs/arithmetic.md §2.3): ranges from the model's own Clip/Relu6 bounds.
#include "quantize/qat_ranges.h"

#include <cmath>

#include "fixpoint/graph_match.h"
#include "quantize/activation_fusion.h"

namespace fixpoint {

// QAT: a Clip/Relu6 range is the range of the tensor it bounds; a graph input read only by
// such a Clip takes its range (docs/arithmetic.md §2.3).
void collect_qat_ranges(CompileContext& cx) {
  for (const auto& n : cx.g.nodes) {
    double lo, hi;
    if (n.op_type != "Clip" || !match::clip_bounds(cx.g, n, &lo, &hi) || !std::isfinite(lo) || !std::isfinite(hi)) continue;
    cx.qat_ranges[n.outputs[0]] = {lo, hi};
    for (const auto& in : cx.g.inputs)
      if (in.name == n.inputs[0] && match::single_consumer(cx.g, in.name) == &n) cx.qat_ranges[in.name] = {lo, hi};
  }
}

}  // namespace fixpoint
