// fixpoint: model statistics for `fixpoint inspect`: op counts, parameters, MACs per layer.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "fixpoint/ir.h"

namespace fixpoint {

struct LayerStats {
  std::string name, op, output, output_shape;  // output_shape "1x64x56x56" or "?" when unknown
  int64_t params = 0;                          // elements of float initializers read by the node
  int64_t macs = 0;                            // multiply-accumulates (Conv, ConvTranspose, Gemm, MatMul)
  bool macs_known = true;                      // false when a needed shape is unknown
};

struct ModelStats {
  std::vector<LayerStats> layers;
  std::map<std::string, int> op_counts;
  int64_t params = 0, macs = 0;
  bool macs_complete = true;
};

ModelStats model_stats(const Graph& g);

}  // namespace fixpoint
