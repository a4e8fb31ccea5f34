// Which output channel each weight of a Conv or ConvTranspose belongs to, for the passes that
// fold per-channel constants into weights (fuse_conv_batchnorm, fold_conv_affine).
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

}  // namespace fixpoint::conv_layout
