// The epilogue of the GEMM convolutions (conv_gemm.cc, conv_implicit.cc, depthwise_direct.cc):
// RQ (13) of a run of one channel's sums into output codes, with the zero-point term of the
// u8 x s8 sums folded into the bias.
// Generic code: included only by translation units compiled for the baseline ISA.
#pragma once
#include <algorithm>
#include <cstdint>

#include "../reference/integer/integer_kernels.h"
#include "fixpoint/fixedpoint.h"
#include "requant.h"

namespace fixpoint::xk {

// The ISA's vector epilogues of int32 sums (requant.h), null where it has none.
struct RequantFns {
  RequantRowFn row = nullptr;      // RQ in place
  RequantStoreFn store = nullptr;  // RQ and the store of the codes in one pass
  RequantChannelsFn channels = nullptr;  // RQ across channels into channel-fastest outputs
  RequantChannelsFn rows = nullptr;      // RQ of several channels' rows into channel-major outputs
  RequantChannelsFn transposed = nullptr;  // RQ of position-major sums into channel-major outputs
};

// The int32 constants of the multi-channel vector epilogues (requant.h's _rows_ and _channels_)
// for channels j0 .. j0 + n - 1 of a non-wide layer: b[j] = bias - z_u w_sum[j] (w_sum null: no
// zero term), m and n; false (the caller takes requant_store) where the layer is wide or a
// constant or the clamp leaves their conditions.
inline bool vector_requant_constants(const qref::ChannelRequant& rq, int64_t j0, int64_t n, int64_t zu,
                                     const int32_t* w_sum, int32_t* b32, int32_t* m32, int32_t* n32) {
  auto fits = [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
  if (rq.wide || !fits(rq.r.lo - rq.zy) || !fits(rq.r.hi - rq.zy) || !fits(rq.zy)) return false;
  for (int64_t jj = 0; jj < n; ++jj) {
    const int64_t j = j0 + jj, b = rq.bias[j] - (w_sum ? zu * w_sum[j] : 0);
    if (!fits(b) || rq.mult[j] <= 0 || rq.mult[j] > INT32_MAX || rq.shift[j] < 1 || rq.shift[j] > 62) return false;
    b32[jj] = static_cast<int32_t>(b);
    m32[jj] = static_cast<int32_t>(rq.mult[j]);
    n32[jj] = static_cast<int32_t>(rq.shift[j]);
  }
  return true;
}

// out[i] = RQ(bias[ch] - zero_term + sum[i]) (13) for `count` int32 sums of channel ch.
// zero_term folds the u8 x s8 GEMM's z_u sum w into the bias: its sums are sum (u - z_u) w +
// z_u sum w, and the result is the sum (q - z) w of (14) (0 for other callers). Where
// requant.h's conditions hold (bias + sum within int32, n in [1, 62], m in (0, 2^31)) the ISA's
// one-pass store, else its in-place RQ, else the reference's RQ. May overwrite sum.
//
// A non-wide layer meets the bias + sum bound by construction (§4). A wide layer whose sums are
// int32 (8-bit codes) is wide because some channel's bias code or shift is large (§4): its other
// channels' rows are checked here, and where bias + sum is within int32 and n <= 62, the int64
// product of requantize equals requantize_wide's 128-bit one (|a m| < 2^62, the same rounding
// shift and clamp), so the vector epilogue gives the same codes. On the OCR recognizer's wide
// 5x5 depthwise layers, one channel's bias had put every channel on the 128-bit scalar RQ.
template <typename T>
inline void requant_store(const qref::ChannelRequant& rq, const RequantFns& vec, int64_t ch, int64_t zero_term, int32_t* sum,
                          int64_t count, T* out) {
  fx::Multiplier mu{rq.mult[ch], static_cast<int>(rq.shift[ch])};
  int64_t b = rq.bias[ch] - zero_term, lo_z = rq.r.lo - rq.zy, hi_z = rq.r.hi - rq.zy;
  auto fits = [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
  constexpr int64_t k62 = int64_t{1} << 62;
  if (rq.wide && count > 0 && (!fits(b) || mu.m == 0) && b > -k62 - (int64_t{1} << 32) && b < k62 + (int64_t{1} << 32)) {
    // A channel the vector paths cannot take (bias code beyond int32, or m = 0) may be dead: one
    // code whatever its int32 sums (a bias code saturated to +-2^62, or m = 0). RQ is monotone
    // in a (requantize_wide's 128-bit product and RSH), so equal codes at b + INT32_MIN and
    // b + INT32_MAX are the code of every sum. On the OCR recognizer, ~20,000 outputs a run had
    // taken the 128-bit scalar RQ.
    const int64_t c0 = rq(b + INT32_MIN, ch);
    if (c0 == rq(b + INT32_MAX, ch)) {
      std::fill(out, out + count, static_cast<T>(c0));
      return;
    }
  }
  bool ok = fits(b) && mu.m > 0 && fits(mu.m) && mu.n >= 1 && mu.n <= 62 && fits(lo_z) && fits(hi_z) && fits(rq.zy);
  // A wide layer's bias + sum may leave int32: the one-pass store checks each step (and stops
  // at the first that does); before the in-place row, the row's extremes are checked here.
  auto row_fits = [&] {
    if (!rq.wide || count == 0) return true;
    int32_t lo = sum[0], hi = sum[0];
    for (int64_t k = 1; k < count; ++k) {
      lo = std::min(lo, sum[k]);
      hi = std::max(hi, sum[k]);
    }
    return fits(b + lo) && fits(b + hi);
  };
  int64_t i = 0;
  if (ok && vec.store && sizeof(T) <= 2) {
    i = vec.store(sum, count, static_cast<int32_t>(b), mu.m, mu.n, static_cast<int32_t>(lo_z), static_cast<int32_t>(hi_z),
                  static_cast<int32_t>(rq.zy), out, static_cast<int>(sizeof(T)));
  } else if (ok && vec.row && row_fits()) {
    int64_t done = vec.row(sum, count, static_cast<int32_t>(b), mu.m, mu.n, static_cast<int32_t>(lo_z),
                           static_cast<int32_t>(hi_z), static_cast<int32_t>(rq.zy));
    for (; i < done; ++i) out[i] = static_cast<T>(sum[i]);
  }
  for (; i < count; ++i) out[i] = static_cast<T>(rq(b + sum[i], ch));
}

// sum[i] = RQ(bias + sum[i]) (13) in place for `count` int64 sums of channel ch (bias: the
// channel's bias code, plus any zero-point term the caller folds in): the ISA's vector (13)
// where requant.h's conditions hold (a wide layer, |bias| < 2^62 with sums far below it, m in
// (0, 2^31), 33 <= n <= 93, lo - z and hi - z within +-2^62), else the reference's RQ.
inline void requant_wide_in_place(const qref::ChannelRequant& rq, RequantRow64Fn vec, int64_t ch, int64_t bias, int64_t* sum,
                                  int64_t count) {
  int64_t mult = rq.mult[ch], n = rq.shift[ch], done = 0;
  constexpr int64_t k62 = int64_t{1} << 62;
  if (vec && rq.wide && (bias < 0 ? -bias : bias) < k62 && mult > 0 && mult < (int64_t{1} << 31) && n >= 33 && n <= 93 &&
      rq.r.lo - rq.zy >= -k62 && rq.r.hi - rq.zy < k62)
    done = vec(sum, count, bias, mult, static_cast<int>(n), rq.r.lo - rq.zy, rq.r.hi - rq.zy, rq.zy);
  for (int64_t i = done; i < count; ++i) sum[i] = rq(bias + sum[i], ch);
}

}  // namespace fixpoint::xk
