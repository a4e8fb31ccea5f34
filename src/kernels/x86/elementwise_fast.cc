// Optimized run steps of 8/16-bit Add/Sub (17), Mul (18) and tables (20): typed loops over the
// common broadcast patterns instead of the reference's int64 copies and general index walk.
// Bit-identical to the reference kernels (tests/kernels/x86/elementwise_fast_test.cc); anything
// outside the handled cases runs the reference kernel.
#include "elementwise_fast.h"

#include <algorithm>

#include "../reference/common.h"
#include "addsub_row.h"
#include "table_curve.h"
#include "fixpoint/cpu_isa.h"
#include "fixpoint/parallel.h"

namespace fixpoint::xk {

bool narrow(DType t) { return t == DType::Int8 || t == DType::UInt8 || t == DType::Int16 || t == DType::UInt16; }

namespace {

// The (17) row of this process's ISA: AVX-512F on avx512vnni, else AVX2 (callers check that the
// ISA is one of the two).
AddSubRowFn addsub_row() { return selected_isa() == "avx512vnni" ? addsub_row_avx512 : addsub_row_avx2; }

// Elements per task of the elementwise loops (each element is independent: any split gives the
// same codes).
constexpr int64_t kChunk = 1 << 14;


// Operand b (right-aligned against the output) is 1 everywhere except one contiguous run of
// dims equal to the output's: then b's element for output o is (o / inner) % span. Covers equal
// shapes (inner 1, span = all), scalars (span 1), per-channel ([C, 1, 1]) and trailing blocks.
bool block_broadcast(const Shape& out, const Shape& b, int64_t* inner, int64_t* span) {
  if (b.size() > out.size()) return false;
  size_t off = out.size() - b.size();
  int64_t first = -1, last = -1;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i] == 1 && out[off + i] != 1) continue;
    if (b[i] != out[off + i]) return false;
    if (b[i] == 1) {  // 1 against 1: fits either way, and does not split a run (1x480x1x40)
      if (first >= 0 && last == static_cast<int64_t>(off + i) - 1) last = static_cast<int64_t>(off + i);
      continue;
    }
    if (first < 0) first = static_cast<int64_t>(off + i);
    else if (last != static_cast<int64_t>(off + i) - 1) return false;  // a gap: two runs
    last = static_cast<int64_t>(off + i);
  }
  *inner = 1;
  *span = 1;
  if (first < 0) {
    *inner = shape_numel(out);
    return true;
  }
  for (size_t d = static_cast<size_t>(last) + 1; d < out.size(); ++d) *inner *= out[d];
  for (int64_t d = first; d <= last; ++d) *span *= out[d];
  return true;
}

// The binary kernels' shared frame: one operand has the output's shape, the other is a block
// broadcast (either way round: f keeps the operands' order); calls f(q_a - z_a, q_b - z_b) for
// each output and stores its code. `row(full, part, part_steps, y, count, full_is_a)` may do a
// contiguous run first (part_steps: the part operand advances with the output, else one code
// for the run) and returns how many outputs it wrote; f does the rest.
struct NoRow {
  template <typename A, typename B, typename Y>
  int64_t operator()(const A*, const B*, bool, Y*, int64_t, bool) const {
    return 0;
  }
};

template <typename F, typename R = NoRow>
bool binary_narrow(qref::QContext& c, F&& f, R&& row = R{}) {
  const Tensor &a = *c.in[0], &b = *c.in[1];
  if (!narrow(a.dtype()) || !narrow(b.dtype()) || !narrow(c.out_q[0].type)) return false;
  Shape ys = ref::broadcast(a.shape(), b.shape(), c.op.node);
  int64_t inner, span;
  bool a_full = ys == a.shape() && block_broadcast(ys, b.shape(), &inner, &span);
  if (!a_full && !(ys == b.shape() && block_broadcast(ys, a.shape(), &inner, &span))) return false;
  const Tensor &full = a_full ? a : b, &part = a_full ? b : a;
  Tensor& y = c.output(0, ys, false);  // every element is written below
  int64_t zf = c.in_q[a_full ? 0 : 1].zero_point, zp = c.in_q[a_full ? 1 : 0].zero_point, n = y.numel();
  // f in the operands' order, from (full, part) values
  auto g = [&](int64_t vf, int64_t vp) { return a_full ? f(vf, vp) : f(vp, vf); };
  qref::visit_int(full.dtype(), [&](auto ta) {
    qref::visit_int(part.dtype(), [&](auto tb) {
      qref::visit_int(y.dtype(), [&](auto ty) {
        using A = decltype(ta);
        using B = decltype(tb);
        using Y = decltype(ty);
        const A* pa = full.data<A>();
        const B* pb = part.data<B>();
        Y* py = y.data<Y>();
        // Outputs [lo, hi): b's element for output o is (o / inner) % span.
        auto range = [&](int64_t lo, int64_t hi) {
          if (inner == 1) {  // the broadcast operand varies with every element: runs up to span
            for (int64_t o0 = lo; o0 < hi;) {
              int64_t j = o0 % span, end = std::min(hi, o0 + span - j);
              int64_t o = o0 + row(pa + o0, pb + j, true, py + o0, end - o0, a_full);
              for (j += o - o0; o < end; ++o, ++j)
                py[o] = static_cast<Y>(g(static_cast<int64_t>(pa[o]) - zf, static_cast<int64_t>(pb[j]) - zp));
              o0 = end;
            }
            return;
          }
          for (int64_t o0 = lo; o0 < hi;) {
            int64_t blk = o0 / inner, end = std::min(hi, (blk + 1) * inner);
            int64_t o = o0 + row(pa + o0, pb + blk % span, false, py + o0, end - o0, a_full);
            int64_t bv = static_cast<int64_t>(pb[blk % span]) - zp;
            for (; o < end; ++o) py[o] = static_cast<Y>(g(static_cast<int64_t>(pa[o]) - zf, bv));
            o0 = end;
          }
        };
        parallel_for_chunks(n, kChunk, c.threads, range);
      });
    });
  });
  return true;
}

// binary_narrow's `row` for the vector row kernels (addsub_row.h): builds the two operands of a
// run (the full operand's codes and the part's, stepping or one code, with their zero points by
// operand order and coefficients coef_a, coef_b of a and b) and returns
// kernel(full, part, y, y_bytes, count), or 0 (the scalar loop does the run) when `enabled` is
// false or a code is wider than 16 bits.
template <class K>
auto operand_row(const qref::QContext& c, bool enabled, int64_t coef_a, int64_t coef_b, K kernel) {
  return [&c, enabled, coef_a, coef_b, kernel](const auto* pf, const auto* pp, bool steps, auto* py, int64_t count,
                                               bool full_is_a) -> int64_t {
    using F = std::remove_cv_t<std::remove_pointer_t<decltype(pf)>>;
    using P = std::remove_cv_t<std::remove_pointer_t<decltype(pp)>>;
    using Y = std::remove_pointer_t<decltype(py)>;
    if constexpr (sizeof(F) > 2 || sizeof(P) > 2 || sizeof(Y) > 2) {
      return 0;  // (binary_narrow runs 8/16-bit codes only)
    } else {
      if (!enabled) return 0;
      int64_t zf = c.in_q[full_is_a ? 0 : 1].zero_point, zp = c.in_q[full_is_a ? 1 : 0].zero_point;
      AddSubOperand full{pf, sizeof(F), std::is_signed_v<F>, static_cast<int32_t>(zf), full_is_a ? coef_a : coef_b, true};
      AddSubOperand part{pp, sizeof(P), std::is_signed_v<P>, static_cast<int32_t>(zp), full_is_a ? coef_b : coef_a, steps};
      return kernel(full, part, static_cast<void*>(py), static_cast<int>(sizeof(Y)), count);
    }
  };
}

// The code of a 8/16-bit operand's first element.
int64_t first_code(const AddSubOperand& o) {
  if (o.bytes == 1) return o.is_signed ? *static_cast<const int8_t*>(o.codes) : *static_cast<const uint8_t*>(o.codes);
  return o.is_signed ? *static_cast<const int16_t*>(o.codes) : *static_cast<const uint16_t*>(o.codes);
}

}  // namespace

bool addsub_fast(qref::QContext& c) {
  const QOp& op = c.op;
  const auto& p = op.as<params::AddSub>();
  int64_t A = p.A, B = p.B * p.sign;
  int L = static_cast<int>(p.L);
  // |q - z| < 2^bits of each operand's codes, so |a A + b B| < 2^ba |A| + 2^bb |B|; below 2^62
  // the sum and RSH's rounding term (< 2^61) stay inside int64, where RSH (4) is the reference's
  // 128-bit RSH. (A 16-bit operand next to an 8-bit one has |A| near 2^43: a per-operand bound.)
  auto bits = [](const Tensor* t) { return static_cast<int>(dtype_size(t->dtype())) * 8; };
  if (c.in.size() < 2 || !c.in[0] || !c.in[1] || L < 1 || L > 62) return false;
  __int128 bound = static_cast<__int128>(std::abs(A)) * (int64_t{1} << bits(c.in[0])) +
                   static_cast<__int128>(std::abs(B)) * (int64_t{1} << bits(c.in[1]));
  if (bound >= (static_cast<__int128>(1) << 62)) return false;
  fx::Range r = qref::clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  // AVX2 rows (addsub_row.h): its conditions on top of the bound above.
  auto fits32 = [](int64_t v) { return v > INT32_MIN && v <= INT32_MAX; };
  bool vec = (selected_isa() == "avx2" || selected_isa() == "avx512vnni") && L <= 61 &&
             bound < (static_cast<__int128>(1) << 61) && std::abs(A) < (int64_t{1} << 55) &&
             std::abs(B) < (int64_t{1} << 55) && fits32(r.lo - zy) && fits32(r.hi - zy) && fits32(zy);
  auto row = operand_row(c, vec, A, B, [&](const AddSubOperand& f, const AddSubOperand& q, void* py, int y_bytes,
                                           int64_t count) {
    return addsub_row()(f, q, py, y_bytes, count, L, static_cast<int32_t>(r.lo - zy), static_cast<int32_t>(r.hi - zy),
                        static_cast<int32_t>(zy));
  });
  return binary_narrow(c, [&](int64_t a, int64_t b) { return fx::sat(fx::rsh(a * A + b * B, L) + zy, r); }, row);
}

bool mul_fast(qref::QContext& c) {
  const QOp& op = c.op;
  const auto& p = op.as<params::Mul>();
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  // (13) in int64 equals the wide layers' 128-bit form while |(q_a - z_a)(q_b - z_b) m| < 2^62.
  auto bits = [](DType t) { return static_cast<int>(dtype_size(t)) * 8; };
  fx::Range r = qref::clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  // (13) of the product in 64-bit lanes (AVX-512; callers check m > 0, n >= 1, the bounds below).
  auto wide_row = [&](const AddSubOperand& f, const AddSubOperand& q, void* py, int y_bytes, int64_t count) {
    return mul_row_wide_avx512(f, q, py, y_bytes, count, mu.m, mu.n, static_cast<int32_t>(r.lo - zy),
                               static_cast<int32_t>(r.hi - zy), static_cast<int32_t>(zy));
  };
  if (bits(c.in[0]->dtype()) + bits(c.in[1]->dtype()) + 32 > 62 || std::abs(mu.m) >= (int64_t{1} << 31)) {
    // 16 x 16-bit codes: the product (below 2^34) times m needs the reference's own 128-bit
    // form, which wide layers use. A non-wide layer's int64 form does not overflow on its codes
    // (the compiler's bound, §4), so it equals the 128-bit one and the same vector row serves
    // (OCR rec's Swish x * Sigmoid(x) of two 16-bit operands had run the reference).
    auto fits32 = [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
    bool vec = selected_isa() == "avx512vnni" && mu.m > 0 && mu.m < (int64_t{1} << 31) && mu.n >= 1 &&
               fits32(r.lo - zy) && fits32(r.hi - zy) && fits32(zy);
    auto row = operand_row(c, vec, 0, 0, wide_row);
    if (!p.wide) return binary_narrow(c, [&](int64_t a, int64_t b) { return fx::requantize(a * b, mu, zy, r); }, row);
    return binary_narrow(c, [&](int64_t a, int64_t b) { return fx::requantize_wide(a * b, mu, zy, r); }, row);
  }
  // A row whose b is one code (a per-channel scale, as SE blocks' x * HardSigmoid(...)): the
  // product (a - z_a)(b - z_b) m is (a - z_a) times the integer A = (b - z_b) m, so (13) on it
  // is (17)'s RSH(a A, n) with B = 0, the Add/Sub AVX2 row (same integers, same rounding).
  // Two varying operands (Zero-DCE's curve steps r (x^2 - x), 8 x 16-bit codes, and x * x):
  // the 64-bit lanes of the wide row, exact here (|(a - z_a)(b - z_b) m| < 2^(30 + 31)).
  auto fits32 = [](int64_t v) { return v > INT32_MIN && v <= INT32_MAX; };
  bool vec = (selected_isa() == "avx2" || selected_isa() == "avx512vnni") && mu.n >= 1 && mu.n <= 61 &&
             fits32(r.lo - zy) && fits32(r.hi - zy) && fits32(zy);
  const bool lanes64 = selected_isa() == "avx512vnni" && mu.m > 0;
  auto row = operand_row(c, vec, 0, 0, [&](AddSubOperand f, const AddSubOperand& q, void* py, int y_bytes,
                                           int64_t count) -> int64_t {
    if (q.step) return lanes64 ? wide_row(f, q, py, y_bytes, count) : 0;
    int64_t A = (first_code(q) - q.zero_point) * mu.m;  // |b - z_b| < 2^16, |m| < 2^31
    // addsub_row_avx2's bounds: |A| < 2^55 and |a - z_a| |A| < 2^61 (|a - z_a| < 2^(8 bytes)).
    if (std::abs(A) >= (int64_t{1} << (61 - 8 * f.bytes))) return 0;
    f.coef = A;
    return addsub_row()(f, q, py, y_bytes, count, static_cast<int>(mu.n), static_cast<int32_t>(r.lo - zy),
                        static_cast<int32_t>(r.hi - zy), static_cast<int32_t>(zy));
  });
  return binary_narrow(c, [&](int64_t a, int64_t b) { return fx::requantize(a * b, mu, zy, r); }, row);
}

// y[i] = t[x[i] - lo] (20). Restrict pointers: a store of 8-bit codes may alias anything, and
// without them every iteration reloaded the pointers (4x slower on the OCR recognizer's tables).
template <typename X, typename Y, typename T>
void lookup_run(const X* __restrict x, Y* __restrict y, int64_t n, const T* __restrict t, int64_t lo) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<Y>(t[static_cast<int64_t>(x[i]) - lo]);
}

bool lut_fast(qref::QContext& c) {
  const Tensor& x = *c.in[0];
  const auto& p = c.op.as<params::Table>();
  const Tensor& tab = p.table;
  // Tables hold output codes (int32 in artifacts written before session 4).
  if (!narrow(x.dtype()) || (tab.dtype() != c.out_q[0].type && tab.dtype() != DType::Int32)) return false;
  Tensor& y = c.output(0, x.shape(), false);  // every element is looked up
  int64_t lo = p.in_lo;
  qref::visit_int(x.dtype(), [&](auto tx) {
    qref::visit_int(y.dtype(), [&](auto ty) {
      using X = decltype(tx);
      using Y = decltype(ty);
      const X* px = x.data<X>();
      Y* py = y.data<Y>();
      auto lookup = [&](const auto* t) {
        int64_t n = x.numel();
        parallel_for_chunks(n, kChunk, c.threads, [&](int64_t i0, int64_t i1) { lookup_run(px + i0, py + i0, i1 - i0, t, lo); });
      };
      if constexpr (std::is_same_v<X, int16_t> && sizeof(Y) == 1) {
        const bool avx512 = selected_isa() == "avx512vnni", avx2 = selected_isa() == "avx2";
        if (p.curve.numel() && tab.dtype() == y.dtype() && (avx512 || avx2)) {
          // (20a): the curve instead of lookups, the table where it is near a boundary.
          fx::TableCurve curve = fx::TableCurve::from_values(p.curve.data<float>(), fx::range_of(y.dtype()));
          const auto* t = reinterpret_cast<const uint8_t*>(tab.data<Y>());
          int64_t n = x.numel();
          parallel_for_chunks(n, kChunk, c.threads, [&](int64_t i0, int64_t i1) {
            (avx512 ? table_curve_s16_x8_avx512 : table_curve_s16_x8_avx2)(
                px + i0, reinterpret_cast<uint8_t*>(py + i0), i1 - i0, curve, t, lo);
          });
          return;
        }
      }
      if (tab.dtype() == DType::Int32) lookup(tab.data<int32_t>());
      else lookup(tab.data<Y>());
    });
  });
  return true;
}

}  // namespace fixpoint::xk
