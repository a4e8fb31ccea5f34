// fixpoint: which output channel each weight of a Conv or ConvTranspose belongs to. The one
// owner of the ConvTranspose channel map: the passes that fold per-channel constants into
// weights (fuse_conv_batchnorm, fold_conv_affine) and the compiler's prepare step, which lays
// the weights out as one row per output channel (docs/arithmetic.md (22)).
//   Conv:          W[M, C/g, k...]      element i belongs to output channel i / (numel / M)
//   ConvTranspose: W[C, M/g, k...]      element (c, j, k...) belongs to (c / (C/g)) * (M/g) + j
#pragma once
#include "fixpoint/ir.h"

namespace fixpoint::conv_layout {

inline bool is_conv(const Node& n) { return n.domain.empty() && (n.op_type == "Conv" || n.op_type == "ConvTranspose"); }

// Number of output channels M.
inline int64_t out_channels(const Node& n, const Tensor& w) {
  return n.op_type == "Conv" ? w.dim(0) : w.dim(1) * n.attr_int("group", 1);
}

// Output channel of flat weight index i.
inline int64_t out_channel(const Node& n, const Tensor& w, int64_t i) {
  if (n.op_type == "Conv") return i / (w.numel() / w.dim(0));
  int64_t g = n.attr_int("group", 1), C = w.dim(0), Mg = w.dim(1), per = w.numel() / (C * Mg);
  int64_t c = i / (Mg * per), j = (i / per) % Mg;
  return (c / (C / g)) * Mg + j;
}

// Flat index in W[C, M/g, k...] of ConvTranspose output channel m, input channel ci of its group
// (0 <= ci < C/g) and kernel cell k (the inverse of out_channel).
inline int64_t transpose_weight_index(const Node& n, const Tensor& w, int64_t m, int64_t ci, int64_t k) {
  int64_t g = n.attr_int("group", 1), C = w.dim(0), Mg = w.dim(1), per = w.numel() / (C * Mg);
  return (((m / Mg) * (C / g) + ci) * Mg + m % Mg) * per + k;
}

}  // namespace fixpoint::conv_layout
