// Expand (bidirectional broadcast to a shape) and Tile (repeat along each axis).
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_expand(KernelContext& c) {
  const Tensor& x = c.in(0);
  Shape target = c.in(1).to_i64_vector();
  for (int64_t d : target) FP_CHECK(d >= 0, c.node.label(), ": negative dimension ", d, " in shape");
  Shape ys = broadcast(x.shape(), target, c.node);
  Tensor& y = c.output(0, x.dtype(), ys);
  size_t es = dtype_size(x.dtype());
  const char* px = static_cast<const char*>(x.raw());
  char* py = static_cast<char*>(y.raw());
  for_each_broadcast<1>(ys, {x.shape()}, [&](int64_t o, const std::array<int64_t, 1>& off) {
    std::memcpy(py + o * es, px + off[0] * es, es);
  });
}

void k_tile(KernelContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> reps = c.in(1).to_i64_vector();
  FP_CHECK(static_cast<int64_t>(reps.size()) == x.rank(), c.node.label(), ": repeats has ", reps.size(),
           " values for rank ", x.rank());
  Shape ys = x.shape();
  for (size_t i = 0; i < reps.size(); ++i) {
    FP_CHECK(reps[i] >= 0, c.node.label(), ": negative repeat ", reps[i]);
    ys[i] *= reps[i];
  }
  Tensor& y = c.output(0, x.dtype(), ys);
  if (y.numel() == 0) return;
  size_t es = dtype_size(x.dtype());
  std::vector<int64_t> xst = strides_of(x.shape());
  const char* px = static_cast<const char*>(x.raw());
  char* py = static_cast<char*>(y.raw());
  int64_t r = x.rank();
  std::vector<int64_t> idx(r, 0);
  for (int64_t o = 0; o < y.numel(); ++o) {
    int64_t off = 0;
    for (int64_t d = 0; d < r; ++d) off += (idx[d] % x.dim(d)) * xst[d];
    std::memcpy(py + o * es, px + off * es, es);
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++idx[d] < ys[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

void register_expand_tile(KernelRegistry& r) {
  r.add("Expand", k_expand);
  r.add("Tile", k_tile);
}

}  // namespace fixpoint::ref
