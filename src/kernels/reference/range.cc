// Range(start, limit, delta): max(ceil((limit - start) / delta), 0) elements start + i * delta,
// in the inputs' type (ONNX's definition; a zero delta is an error).
#include <cmath>

#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_range(KernelContext& c) {
  const Tensor &s = c.in(0), &l = c.in(1), &d = c.in(2);
  FP_CHECK(s.numel() == 1 && l.numel() == 1 && d.numel() == 1, c.node.label(), ": start, limit and delta must be scalars");
  FP_CHECK(s.dtype() == l.dtype() && s.dtype() == d.dtype(), c.node.label(), ": start, limit and delta dtypes differ");
  dispatch_numeric(s.dtype(), c.node, [&](auto tag) {
    using T = decltype(tag);
    using N = Num<T>;
    auto start = N::load(s.data<T>()[0]), limit = N::load(l.data<T>()[0]), delta = N::load(d.data<T>()[0]);
    FP_CHECK(delta != 0, c.node.label(), ": delta is 0");
    double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
    FP_CHECK(!(n > double(int64_t{1} << 31)), c.node.label(), ": ", n, " elements is too many");
    int64_t count = n > 0 ? static_cast<int64_t>(n) : 0;
    Tensor& y = c.output(0, s.dtype(), {count});
    T* py = y.data<T>();
    for (int64_t i = 0; i < count; ++i) py[i] = N::store(static_cast<typename N::C>(start + static_cast<decltype(start)>(i) * delta));
  });
}

}  // namespace

void register_range(KernelRegistry& r) { r.add("Range", k_range); }

}  // namespace fixpoint::ref
