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
  const Shape &in = w3.in, &out = w3.out, &k = w3.kernel, &s = w3.stride, &d = w3.dilation, &p = w3.pad_begin;
  for (int64_t od = 0; od < out[0]; ++od)
    for (int64_t oh = 0; oh < out[1]; ++oh)
      for (int64_t ow = 0; ow < out[2]; ++ow) {
        A sum = 0;
        int64_t count = 0;
        const int64_t o3[3] = {od, oh, ow};
        int64_t padded = include_pad ? padded_window_cells(w3, o3) : 0;
        for (int64_t kd = 0; kd < k[0]; ++kd) {
          int64_t id = od * s[0] - p[0] + kd * d[0];
          if (id < 0 || id >= in[0]) continue;
          for (int64_t kh = 0; kh < k[1]; ++kh) {
            int64_t ih = oh * s[1] - p[1] + kh * d[1];
            if (ih < 0 || ih >= in[1]) continue;
            for (int64_t kw = 0; kw < k[2]; ++kw) {
              int64_t iw = ow * s[2] - p[2] + kw * d[2];
              if (iw < 0 || iw >= in[2]) continue;
              sum += Nm::load(xp[(id * in[1] + ih) * in[2] + iw]);
              ++count;
            }
          }
        }
        int64_t div = include_pad ? padded : count;
        yp[(od * out[1] + oh) * out[2] + ow] = Nm::store(div > 0 ? sum / static_cast<A>(div) : A(0));
      }
}

}  // namespace fixpoint::ref
