// Concat along one axis (byte copies: works for every dtype).
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_concat(KernelContext& c) {
  const Node& n = c.node;
  FP_CHECK(c.num_inputs() >= 1, n.label(), ": needs at least one input");
  const Tensor& x0 = c.in(0);
  int64_t r = x0.rank();
  int64_t axis = norm_axis(n.attr_int("axis", n.opset < 4 ? 1 : 0), r, n);
  Shape ys = x0.shape();
  ys[axis] = 0;
  for (size_t k = 0; k < c.num_inputs(); ++k) {
    const Tensor& t = c.in(k);
    FP_CHECK(t.dtype() == x0.dtype(), n.label(), ": input ", k, " dtype ", dtype_name(t.dtype()), " differs from ",
             dtype_name(x0.dtype()));
    FP_CHECK(t.rank() == r, n.label(), ": input ", k, " has rank ", t.rank(), ", expected ", r);
    for (int64_t d = 0; d < r; ++d)
      FP_CHECK(d == axis || t.dim(d) == x0.dim(d), n.label(), ": input ", k, " shape ", shape_str(t.shape()),
               " does not match ", shape_str(x0.shape()), " outside axis ", axis);
    ys[axis] += t.dim(axis);
  }
  Tensor& y = c.output(0, x0.dtype(), ys);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= ys[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= ys[d];
  size_t es = dtype_size(x0.dtype());
  char* py = static_cast<char*>(y.raw());
  int64_t orow = ys[axis] * inner;
  int64_t at = 0;
  for (size_t k = 0; k < c.num_inputs(); ++k) {
    const Tensor& t = c.in(k);
    int64_t row = t.dim(axis) * inner;
    const char* pt = static_cast<const char*>(t.raw());
    for (int64_t o = 0; o < outer && row > 0; ++o) std::memcpy(py + (o * orow + at) * es, pt + o * row * es, row * es);
    at += row;
  }
}

}  // namespace

void register_concat(KernelRegistry& r) { r.add("Concat", k_concat); }

}  // namespace fixpoint::ref
