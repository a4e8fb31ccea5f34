// Optimized run step of the integer Softmax (23)-(25), docs/arithmetic.md §5.13: the same
// integers as the reference kernel (qref::k_softmax), computed with fewer divisions.
//
// Per row, S (24) is fixed, so q_y (25) depends on the element only through d = max - q
// (capped at the table's span). A row of `len` elements whose d take at most dmax + 1 < len
// values gets its outputs from a per-row table: q_y(d) = SAT(R(E[d] Q / S)) made once per d by
// fx::round_div, the reference's own rounding, and then looked up. The OCR recognizer's last
// Softmax (40 rows of 6,625 classes, 8-bit codes: d <= 255) does 256 divisions per row instead
// of 6,625 128-bit ones (2.7 ms of its 21 ms int8 run). Shorter rows divide per element, as the
// reference does. Rows along the last axis (inner = 1) run loops over the codes GCC vectorizes
// (the max) and index E and the row table by mx - q directly: that Softmax 0.44 -> 0.18 ms
// at 1 thread. On AVX-512, rows of 8-bit codes take both loops in vectors (softmax_rows.h: the
// sum by gathers, the lookup from the row table in registers): that Softmax 0.31-0.38 -> 0.19-0.21
// ms at 1 thread, 0.16-0.21 -> 0.11-0.12 at 2.
// Rows are independent, so any thread split gives the same codes.
#include <algorithm>
#include <limits>
#include <type_traits>

#include "../reference/common.h"
#include "elementwise_fast.h"
#include "fixpoint/cpu_isa.h"
#include "fixpoint/parallel.h"
#include "fixpoint/task_buffer.h"
#include "softmax_rows.h"

namespace fixpoint::xk {

bool softmax_fast(qref::QContext& c) {
  const Tensor& x = *c.in[0];
  const auto& p = c.op.as<params::Softmax>();
  if (!narrow(x.dtype()) || !narrow(c.out_q[0].type) || p.exp_table.dtype() != DType::Int32) return false;
  const ref::SoftmaxRows rw = ref::softmax_rows(c.op.node, x.shape());
  Tensor& y = c.output(0, x.shape(), false);  // every element written
  const int32_t* E = p.exp_table.data<int32_t>();
  const int64_t span = p.exp_table.numel(), Q = p.Q, len = rw.len, inner = rw.inner;
  const fx::Range r = fx::range_of(c.out_q[0].type);
  if (len == 0 || span == 0) return true;
  const bool avx512 = selected_isa() == "avx512vnni";  // (softmax_rows.h's ISA)
  qref::visit_int(x.dtype(), [&](auto tx) {
    qref::visit_int(y.dtype(), [&](auto ty) {
      using X = decltype(tx);
      using Y = decltype(ty);
      const X* px = x.data<X>();
      Y* py = y.data<Y>();
      parallel_for(rw.outer * inner, c.threads, [&](int64_t oi) {
        const int64_t base = (oi / inner) * len * inner + oi % inner;
        const X* xr = px + base;
        Y* yr = py + base;
        int64_t mx = std::numeric_limits<int64_t>::min(), mn = std::numeric_limits<int64_t>::max();
        if (inner == 1) {  // the usual last axis: loops over X GCC vectorizes
          X vmx = xr[0], vmn = xr[0];
          for (int64_t j = 1; j < len; ++j) {
            vmx = std::max(vmx, xr[j]);
            vmn = std::min(vmn, xr[j]);
          }
          mx = vmx;
          mn = vmn;
        } else {
          for (int64_t j = 0; j < len; ++j) {
            int64_t q = xr[j * inner];
            mx = std::max(mx, q);
            mn = std::min(mn, q);
          }
        }
        auto d_of = [&](int64_t j) { return std::min<int64_t>(mx - xr[j * inner], span - 1); };
        int64_t S = 0;  // (24)
        const bool direct = inner == 1 && mx - mn < span;  // every d = mx - q within the table: no cap
        // Rows of 8-bit codes on AVX-512: the sum and the lookup below in vectors (softmax_rows.h).
        const bool vector_rows = direct && sizeof(X) == 1 && avx512;
        const auto* xb = reinterpret_cast<const uint8_t*>(xr);
        if (vector_rows) {
          S = softmax_sum_s8u8_avx512(xb, std::is_signed_v<X>, len, static_cast<int32_t>(mx), E);
        } else if (direct) {
          for (int64_t j = 0; j < len; ++j) S += E[mx - xr[j]];
        } else {
          for (int64_t j = 0; j < len; ++j) S += E[d_of(j)];
        }
        // (25): R(a / S) = floor((2a + S) / 2S), 0 when 2a < S. Where 2a + S stays below 2^62
        // (a = E Q >= 0, E < 2^31) the int64 division gives round_div's 128-bit quotient.
        const bool small = S > 0 && Q >= 0 && static_cast<__int128>(2) * INT32_MAX * Q + S < (static_cast<__int128>(1) << 62);
        auto out = [&](int64_t d) {
          const int64_t a = int64_t{E[d]} * Q;
          int64_t v = 0;
          if (small && a >= 0) v = 2 * a < S ? 0 : (2 * a + S) / (2 * S);
          else v = static_cast<int64_t>(fx::round_div(a, S));
          return static_cast<Y>(fx::sat(v, r));
        };
        const int64_t dmax = std::min(mx - mn, span - 1);
        if (dmax + 1 < len) {
          Y* t = task_buffer<Y, __LINE__>(static_cast<size_t>(dmax + 1));
          for (int64_t d = 0; d <= dmax; ++d) t[d] = out(d);
          if (vector_rows) {
            uint16_t* t16 = task_buffer<uint16_t, __LINE__>(256, 0);  // the words of t (a byte's low byte)
            for (int64_t d = 0; d <= dmax; ++d) t16[d] = static_cast<uint16_t>(t[d]);
            softmax_lookup_s8u8_avx512(xb, std::is_signed_v<X>, len, static_cast<int32_t>(mx), t16, yr,
                                       static_cast<int>(sizeof(Y)));
          } else if (direct) {
            for (int64_t j = 0; j < len; ++j) yr[j] = t[mx - xr[j]];
          } else {
            for (int64_t j = 0; j < len; ++j) yr[j * inner] = t[d_of(j)];
          }
        } else {
          for (int64_t j = 0; j < len; ++j) yr[j * inner] = out(d_of(j));
        }
      });
    });
  });
  return true;
}

}  // namespace fixpoint::xk
