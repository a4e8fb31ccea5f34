// ScatterND(data, indices, updates): a copy of data with the slices indices[i] (the first k dims,
// k = indices.shape[-1]) replaced by, or combined with (reduction add/mul/max/min), updates[i],
// applied in index order (ONNX's definition; duplicate indices follow that order).
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_scatter_nd(KernelContext& c) {
  const Tensor &data = c.in(0), &idx = c.in(1), &upd = c.in(2);
  FP_CHECK(idx.dtype() == DType::Int64, c.node.label(), ": indices must be int64");
  FP_CHECK(upd.dtype() == data.dtype(), c.node.label(), ": updates and data dtypes differ");
  FP_CHECK(idx.rank() >= 1, c.node.label(), ": indices must have rank >= 1");
  int64_t k = idx.dim(-1);
  FP_CHECK(k >= 1 && k <= data.rank(), c.node.label(), ": indices' last dim ", k, " does not fit data of rank ", data.rank());
  int64_t n = idx.numel() / k, slice = 1;
  for (int64_t d = k; d < data.rank(); ++d) slice *= data.dim(d);
  FP_CHECK(upd.numel() == n * slice, c.node.label(), ": updates has ", upd.numel(), " elements, expected ", n * slice);
  std::string red = c.node.attr_string("reduction", "none");
  FP_CHECK(red == "none" || red == "add" || red == "mul" || red == "max" || red == "min", c.node.label(),
           ": reduction '", red, "' is not one of none, add, mul, max, min");
  Tensor& y = c.output(0, data.dtype(), data.shape());
  std::memcpy(y.raw(), data.raw(), data.nbytes());
  std::vector<int64_t> st = strides_of(data.shape());
  const int64_t* pi = idx.data<int64_t>();
  dispatch_numeric(data.dtype(), c.node, [&](auto tag) {
    using T = decltype(tag);
    using N = Num<T>;
    T* py = y.data<T>();
    const T* pu = upd.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0;
      for (int64_t d = 0; d < k; ++d) {
        int64_t v = pi[i * k + d];
        if (v < 0) v += data.dim(d);
        FP_CHECK(v >= 0 && v < data.dim(d), c.node.label(), ": index ", pi[i * k + d], " out of range for dim ", d,
                 " of size ", data.dim(d));
        off += v * st[d];
      }
      for (int64_t j = 0; j < slice; ++j) {
        auto a = N::load(py[off + j]), b = N::load(pu[i * slice + j]);
        decltype(a) r = red == "add" ? a + b : red == "mul" ? a * b : red == "max" ? (a < b ? b : a)
                        : red == "min" ? (b < a ? b : a) : b;
        py[off + j] = N::store(r);
      }
    }
  });
}

}  // namespace

void register_scatter_nd(KernelRegistry& r) { r.add("ScatterND", k_scatter_nd); }

}  // namespace fixpoint::ref
