// One row of LayerNormalization, the definition both the reference kernel (normalization.cc) and
// the fast float path (src/kernels/float/layernorm_f32.cc, rows split between threads) run, so
// both give the same bits. Over the row's `inner` values x_j, in double and in order:
//   m = (sum_j x_j) / inner,   inv = 1 / sqrt((sum_j (x_j - m)^2) / inner + eps),
//   y_j = round_T((x_j - m) inv scale_j [+ bias_j]).
#pragma once
#include <cmath>
#include <vector>

#include "common.h"

namespace fixpoint::ref {

// The normalized block: outer rows of inner values; scale and bias element j of a row at
// scale_off[j] / bias_off[j] (their broadcasts to the normalized shape). Checks the node's
// attributes and shapes (one line naming the node and input at fault).
struct LayerNormGeometry {
  int64_t outer = 1, inner = 1;
  std::vector<int64_t> scale_off, bias_off;
};
LayerNormGeometry layer_norm_geometry(const Node& n, const Shape& x, const Shape& scale, const Shape* bias);

// scale(j), bias(j): element j's values as double; has_bias false: no bias term.
template <typename T, class Scale, class Bias>
void layer_norm_row(const T* row, T* y, int64_t inner, double eps, const Scale& scale, const Bias& bias, bool has_bias,
                    double& mean, double& inv) {
  using Nm = Num<T>;
  using A = typename Nm::C;
  double s = 0, s2 = 0;
  for (int64_t j = 0; j < inner; ++j) s += static_cast<double>(Nm::load(row[j]));
  const double m = s / static_cast<double>(inner);
  for (int64_t j = 0; j < inner; ++j) {
    double d = static_cast<double>(Nm::load(row[j])) - m;
    s2 += d * d;
  }
  inv = 1.0 / std::sqrt(s2 / static_cast<double>(inner) + eps);
  mean = m;
  for (int64_t j = 0; j < inner; ++j) {
    double v = (static_cast<double>(Nm::load(row[j])) - m) * inv * scale(j);
    if (has_bias) v += bias(j);
    y[j] = Nm::store(static_cast<A>(v));
  }
}

}  // namespace fixpoint::ref
