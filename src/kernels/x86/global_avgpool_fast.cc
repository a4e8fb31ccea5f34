// Optimized GlobalAveragePool on 8/16-bit codes: one typed sum per (batch row, channel) plane
// instead of the reference's int64 copy of the input and window walk; the same (19) result:
// requantize_mean of sum (q - z) over the plane's cells (a global window has no padding, so the
// divisor is the cell count either way of count_include_pad). Exact: the sum is taken in int64.
#include "elementwise_fast.h"
#include "fixpoint/parallel.h"

namespace fixpoint::xk {

bool global_avgpool_fast(qref::QContext& c) {
  const Tensor& x = *c.in[0];
  const DType t = x.dtype();
  if (c.op.node.op_type != "GlobalAveragePool" || x.rank() < 3 || x.rank() > 5 ||
      !(t == DType::Int8 || t == DType::UInt8 || t == DType::Int16 || t == DType::UInt16))
    return false;
  const int64_t planes = x.dim(0) * x.dim(1), cells = x.numel() / std::max<int64_t>(planes, 1);
  if (cells == 0) return false;
  Shape ys = {x.dim(0), x.dim(1)};
  for (int64_t i = 2; i < x.rank(); ++i) ys.push_back(1);
  const auto& p = c.op.as<params::AvgPool>();
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  fx::Range r = fx::range_of(c.out_q[0].type);
  int64_t zx = c.in_q[0].zero_point, zy = c.out_q[0].zero_point;
  Tensor& y = c.output(0, ys, false);  // every plane's mean is written
  qref::visit_int(t, [&](auto tx) {
    qref::visit_int(y.dtype(), [&](auto ty) {
      using X = decltype(tx);
      using Y = decltype(ty);
      const X* px = x.data<X>();
      Y* py = y.data<Y>();
      parallel_for(planes, c.threads, [&](int64_t i) {
        const X* v = px + i * cells;
        int64_t sum = 0;
        for (int64_t k = 0; k < cells; ++k) sum += v[k];
        py[i] = static_cast<Y>(fx::requantize_mean(sum - zx * cells, mu, cells, zy, r));
      });
    });
  });
  return true;
}

}  // namespace fixpoint::xk
