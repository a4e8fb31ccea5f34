// Concat (19) of 8/16-bit codes, docs/arithmetic.md §5.4: each input's rows are requantized into
// their place in the output, y = RQ(q - z_x) with the input's multiplier. The reference loads
// every code into an int64 vector and requantizes element by element; here rows are copied
// as they are where the encoding does not change (M = 1, same zero point, same type: RQ is the
// identity), else requantized eight at a time by the AVX2 epilogue of the GEMM paths
// (requant.h; the same bits as fx::requantize where its conditions hold, which are checked),
// in blocks split between threads. Returns false (the reference runs) for other code types.
#include <cstring>

#include "../reference/common.h"
#include "elementwise_fast.h"
#include "fixpoint/cpu_isa.h"
#include "fixpoint/parallel.h"
#include "requant.h"
#include "fixpoint/task_buffer.h"

namespace fixpoint::xk {

bool concat_fast(qref::QContext& c) {
  const QOp& op = c.op;
  auto narrow = [](DType t) { return t == DType::UInt8 || t == DType::Int8 || t == DType::UInt16 || t == DType::Int16; };
  if (!narrow(c.out_q[0].type)) return false;
  for (const Tensor* t : c.in)
    if (!narrow(t->dtype())) return false;
  const ref::ConcatGeometry g = ref::concat_geometry(c.in, op.node.attr_int("axis", 0), op.node);
  Tensor& y = c.output(0, g.ys, false);  // every element is written below
  const int64_t outer = g.outer, inner = g.inner;
  const fx::Range r = fx::range_of(c.out_q[0].type);
  const int64_t zy = c.out_q[0].zero_point, orow = g.ys[g.axis] * inner;
  const auto& p = op.as<params::Concat>();
  const bool avx2 = selected_isa() == "avx2" || selected_isa() == "avx512vnni";
  constexpr int64_t kBlock = 4096;  // codes per task
  int64_t at = 0;
  for (size_t k = 0; k < c.in.size(); ++k) {
    const Tensor& x = *c.in[k];
    const int64_t zx = c.in_q[k].zero_point, row = x.dim(g.axis) * inner, blocks = (row + kBlock - 1) / kBlock;
    const fx::Multiplier mu{p.mult.data<int64_t>()[k], static_cast<int>(p.shift.data<int64_t>()[k])};
    const bool same = x.dtype() == y.dtype() && zx == zy && mu.n >= 0 && mu.n <= 62 && mu.m == (int64_t{1} << mu.n);
    const bool vec = avx2 && mu.m > 0 && mu.m < (int64_t{1} << 31) && mu.n >= 1 && mu.n <= 62;
    qref::visit_int(x.dtype(), [&](auto xtag) {
      using X = decltype(xtag);
      qref::visit_int(y.dtype(), [&](auto ytag) {
        using Y = decltype(ytag);
        const X* px = x.data<X>();
        Y* py = y.data<Y>();
        parallel_for(outer * blocks, c.threads, [&](int64_t t) {
          int64_t o = t / blocks, j0 = t % blocks * kBlock, n = std::min(kBlock, row - j0);
          const X* src = px + o * row + j0;
          Y* dst = py + o * orow + at + j0;
          if (same) {
            std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(Y));
            return;
          }
          int32_t* a = task_buffer<int32_t, __LINE__>(static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i) a[i] = static_cast<int32_t>(src[i] - zx);
          int64_t done = vec ? requant_row_s32_avx2(a, n, 0, mu.m, mu.n, static_cast<int32_t>(r.lo - zy),
                                                    static_cast<int32_t>(r.hi - zy), static_cast<int32_t>(zy))
                             : 0;
          for (int64_t i = 0; i < done; ++i) dst[i] = static_cast<Y>(a[i]);
          for (int64_t i = done; i < n; ++i) dst[i] = static_cast<Y>(fx::requantize(a[i], mu, zy, r));
        });
      });
    });
    at += row;
  }
  return true;
}

}  // namespace fixpoint::xk
