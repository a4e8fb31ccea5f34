// AveragePool / GlobalAveragePool (19): M = s_x / s_y here; each window's count (ONNX's, with or
// without padding) divides exactly at run time.
#include "quantize/prepare/prepare.h"

namespace fixpoint {

bool prepare_avgpool(CompileContext& cx, QOp& op) {
  QParams qy;
  fx::Multiplier mu;
  if (!prepare_sum_encoding(cx, op, &qy, &mu)) return false;
  params::AvgPool a;
  a.m = mu.m;
  a.n = mu.n;
  op.params = a;
  return true;
}

}  // namespace fixpoint
