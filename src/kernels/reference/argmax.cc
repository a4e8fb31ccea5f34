// ArgMax / ArgMin along one axis; ties go to the first index, or the last with select_last_index.
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

template <bool IsMax>
void arg_reduce(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  int64_t axis = norm_axis(n.attr_int("axis", 0), x.rank(), n);
  bool keepdims = n.attr_int("keepdims", 1) != 0, last = n.attr_int("select_last_index", 0) != 0;
  int64_t outer = 1, len = x.dim(axis), inner = 1;
  FP_CHECK(len > 0, n.label(), ": cannot reduce an empty axis");
  for (int64_t i = 0; i < axis; ++i) outer *= x.dim(i);
  for (int64_t i = axis + 1; i < x.rank(); ++i) inner *= x.dim(i);
  Shape ys = x.shape();
  if (keepdims) ys[axis] = 1;
  else ys.erase(ys.begin() + axis);
  Tensor& y = c.output(0, DType::Int64, ys);
  int64_t* py = y.data<int64_t>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      double bv = x.get_f64(o * len * inner + i);
      for (int64_t j = 1; j < len; ++j) {
        double v = x.get_f64((o * len + j) * inner + i);
        bool better = IsMax ? (last ? v >= bv : v > bv) : (last ? v <= bv : v < bv);
        if (better) { bv = v; best = j; }
      }
      py[o * inner + i] = best;
    }
}

}  // namespace

void register_argmax(KernelRegistry& r) {
  r.add("ArgMax", arg_reduce<true>);
  r.add("ArgMin", arg_reduce<false>);
}

}  // namespace fixpoint::ref
