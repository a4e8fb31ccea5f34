// Concat along one axis (byte copies: works for every dtype).
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_concat(KernelContext& c) {
  const Node& n = c.node;
  std::vector<const Tensor*> in;
  for (size_t k = 0; k < c.num_inputs(); ++k) {
    in.push_back(&c.in(k));
    FP_CHECK(c.in(k).dtype() == c.in(0).dtype(), n.label(), ": input ", k, " dtype ", dtype_name(c.in(k).dtype()),
             " differs from ", dtype_name(c.in(0).dtype()));
  }
  const ConcatGeometry g = concat_geometry(in, n.attr_int("axis", n.opset < 4 ? 1 : 0), n);
  const Tensor& x0 = c.in(0);
  Tensor& y = c.output(0, x0.dtype(), g.ys);
  const int64_t outer = g.outer, inner = g.inner, axis = g.axis;
  size_t es = dtype_size(x0.dtype());
  char* py = static_cast<char*>(y.raw());
  int64_t orow = g.ys[axis] * inner;
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
