// One (batch row, channel) plane of AveragePool, the definition both the reference kernel
// (pool.cc) and the fast float path (src/kernels/float/avgpool_f32.cc, planes split between
// threads) run, so both give the same bits: each output is the sum, in window order (kd, kh, kw),
// of the taps inside the input, divided by their count (or, count_include_pad, by the window's
// cells inside input + pads).
#pragma once
#include "common.h"

namespace fixpoint::ref {

// w3: the window padded to 3-D (to_3d); xp, yp: the plane's first input and output element.
template <typename T>
void average_pool_plane(const Window& w3, bool include_pad, const T* xp, T* yp) {
  using Nm = Num<T>;
  using A = typename Nm::C;
  const Shape &in = w3.in, &out = w3.out;
  for (int64_t od = 0; od < out[0]; ++od)
    for (int64_t oh = 0; oh < out[1]; ++oh)
      for (int64_t ow = 0; ow < out[2]; ++ow) {
        A sum = 0;
        int64_t count = 0;
        const int64_t o3[3] = {od, oh, ow};
        int64_t padded = include_pad ? padded_window_cells(w3, o3) : 0;
        for_each_window_cell(w3, od, oh, ow, [&](int64_t id, int64_t ih, int64_t iw) {
          sum += Nm::load(xp[(id * in[1] + ih) * in[2] + iw]);
          ++count;
        });
        int64_t div = include_pad ? padded : count;
        yp[(od * out[1] + oh) * out[2] + ow] = Nm::store(div > 0 ? sum / static_cast<A>(div) : A(0));
      }
}

}  // namespace fixpoint::ref
