// ArgMax / ArgMin along one axis; ties go to the first index, or the last with select_last_index.
// TopK: the k largest (or smallest) along one axis with their indices; equal values keep the
// lower index first (ONNX), NaN sorts as the largest value.
#include <algorithm>
#include <numeric>

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

void k_topk(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  int64_t k;
  if (n.opset < 10) {
    k = n.attr_int("k", -1);
  } else {
    const Tensor* kt = c.input(1);
    FP_CHECK(kt && kt->numel() == 1, n.label(), ": K must be a one-element tensor");
    k = kt->to_i64_vector()[0];
  }
  int64_t axis = norm_axis(n.attr_int("axis", -1), x.rank(), n);
  bool largest = n.attr_int("largest", 1) != 0;
  int64_t outer = 1, len = x.dim(axis), inner = 1;
  FP_CHECK(k >= 0 && k <= len, n.label(), ": K = ", k, " is outside [0, ", len, "] for axis ", axis);
  for (int64_t i = 0; i < axis; ++i) outer *= x.dim(i);
  for (int64_t i = axis + 1; i < x.rank(); ++i) inner *= x.dim(i);
  Shape ys = x.shape();
  ys[axis] = k;
  Tensor& vals = c.output(0, x.dtype(), ys);
  Tensor& idx = c.output(1, DType::Int64, ys);
  std::vector<int64_t> order(static_cast<size_t>(len));
  std::vector<double> v(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < len; ++j) v[j] = x.get_f64((o * len + j) * inner + i);
      std::iota(order.begin(), order.end(), 0);
      auto before = [&](int64_t a, int64_t b) {
        double va = v[a], vb = v[b];
        if (std::isnan(va) || std::isnan(vb)) return std::isnan(va) && !std::isnan(vb) ? largest : (!std::isnan(va) && std::isnan(vb) ? !largest : a < b);
        if (va != vb) return largest ? va > vb : va < vb;
        return a < b;
      };
      std::stable_sort(order.begin(), order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        int64_t at = (o * k + j) * inner + i;
        vals.set_f64(at, v[order[j]]);
        idx.data<int64_t>()[at] = order[j];
      }
    }
}

}  // namespace

void register_argmax(KernelRegistry& r) {
  r.add("TopK", k_topk);
  r.add("ArgMax", arg_reduce<true>);
  r.add("ArgMin", arg_reduce<false>);
}

}  // namespace fixpoint::ref
