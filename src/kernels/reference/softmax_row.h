// One row of Softmax / LogSoftmax, the definition both the reference kernel (softmax.cc) and the
// fast float path (src/kernels/float/softmax_f32.cc, rows split between threads) run, so both
// give the same bits: m = max_j x_j (from -Inf), s = sum_j exp(x_j - m) in order, then
// y_j = exp(x_j - m) / s (each exp computed once and kept in e) or x_j - m - log(s).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>

#include "common.h"

namespace fixpoint::ref {

// x, y: the row's first element, `len` elements `inner` apart; e: scratch of len values.
template <bool Log, typename T>
void softmax_row(const T* x, T* y, int64_t len, int64_t inner, typename Num<T>::C* e) {
  using Nm = Num<T>;
  using A = typename Nm::C;
  A mx = -std::numeric_limits<A>::infinity();
  for (int64_t j = 0; j < len; ++j) mx = std::max(mx, Nm::load(x[j * inner]));
  A sum = 0;
  for (int64_t j = 0; j < len; ++j) {
    e[j] = std::exp(Nm::load(x[j * inner]) - mx);
    sum += e[j];
  }
  for (int64_t j = 0; j < len; ++j) {
    A v = Nm::load(x[j * inner]) - mx;
    y[j * inner] = Nm::store(Log ? v - std::log(sum) : e[j] / sum);
  }
}

}  // namespace fixpoint::ref
