// Softmax. Opset >= 13: along one axis (default -1). Opset < 13: the input is viewed as 2-D
// [prod(dims < axis), prod(dims >= axis)] (default axis 1) and each row normalized.
#include "common.h"
#include "registry.h"
#include "softmax_row.h"

namespace fixpoint::ref {
namespace {

template <bool Log>
void softmax(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  SoftmaxRows rw = softmax_rows(n, x.shape());
  const int64_t outer = rw.outer, len = rw.len, inner = rw.inner;
  Tensor& y = c.output(0, x.dtype(), x.shape());
  dispatch_float(x.dtype(), n, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* py = y.data<T>();
    std::vector<typename Num<T>::C> e(static_cast<size_t>(len));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * len * inner + i;
        softmax_row<Log>(px + base, py + base, len, inner, e.data());
      }
  });
}

}  // namespace

void register_softmax(KernelRegistry& r) {
  r.add("Softmax", softmax<false>);
  r.add("LogSoftmax", softmax<true>);
}

}  // namespace fixpoint::ref
