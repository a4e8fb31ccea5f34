// Reshape, Flatten, Squeeze, Unsqueeze: views of the input's storage with a new shape.
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_reshape(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  std::vector<int64_t> spec = n.opset < 5 ? n.attr_ints("shape") : c.in(1).to_i64_vector();
  bool allowzero = n.attr_int("allowzero", 0) != 0;
  Shape s(spec.size());
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == -1) {
      FP_CHECK(infer < 0, n.label(), ": shape has more than one -1");
      infer = static_cast<int64_t>(i);
      continue;
    }
    FP_CHECK(spec[i] >= 0, n.label(), ": invalid shape entry ", spec[i]);
    if (spec[i] == 0 && !allowzero) {
      FP_CHECK(static_cast<int64_t>(i) < x.rank(), n.label(), ": shape entry 0 at ", i, " copies a dim the input ",
               shape_str(x.shape()), " does not have");
      s[i] = x.dim(static_cast<int64_t>(i));
    } else {
      s[i] = spec[i];
    }
    known *= s[i];
  }
  if (infer >= 0) {
    FP_CHECK(known != 0 && x.numel() % known == 0, n.label(), ": cannot reshape ", shape_str(x.shape()),
             " to the requested shape");
    s[infer] = x.numel() / known;
  }
  FP_CHECK(shape_numel(s) == x.numel(), n.label(), ": cannot reshape ", shape_str(x.shape()), " (", x.numel(),
           " elements) to ", shape_str(s));
  c.set_output(0, x.reshaped(s));
}

void k_flatten(KernelContext& c) {
  const Tensor& x = c.in(0);
  int64_t axis = c.node.attr_int("axis", 1);
  FP_CHECK(axis >= -x.rank() && axis <= x.rank(), c.node.label(), ": axis ", axis, " out of range for rank ", x.rank());
  if (axis < 0) axis += x.rank();
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < x.rank(); ++i) (i < axis ? a : b) *= x.dim(i);
  c.set_output(0, x.reshaped({a, b}));
}

void k_squeeze(KernelContext& c) {
  const Tensor& x = c.in(0);
  bool has = false;
  std::vector<int64_t> axes = ints_from_input_or_attr(c, 1, "axes", &has);
  std::vector<bool> drop(x.rank(), false);
  if (axes.empty()) {
    for (int64_t i = 0; i < x.rank(); ++i) drop[i] = x.dim(i) == 1;
  }
  for (int64_t a : axes) {
    int64_t ax = norm_axis(a, x.rank(), c.node, "axes entry");
    FP_CHECK(x.dim(ax) == 1, c.node.label(), ": cannot squeeze axis ", a, " of size ", x.dim(ax));
    drop[ax] = true;
  }
  Shape s;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (!drop[i]) s.push_back(x.dim(i));
  c.set_output(0, x.reshaped(s));
}

void k_unsqueeze(KernelContext& c) {
  const Tensor& x = c.in(0);
  bool has = false;
  std::vector<int64_t> axes = ints_from_input_or_attr(c, 1, "axes", &has);
  FP_CHECK(has, c.node.label(), ": axes are required");
  int64_t r = x.rank() + static_cast<int64_t>(axes.size());
  std::vector<bool> ins(r, false);
  for (int64_t a : axes) {
    int64_t ax = norm_axis(a, r, c.node, "axes entry");
    FP_CHECK(!ins[ax], c.node.label(), ": axis ", a, " given twice");
    ins[ax] = true;
  }
  Shape s;
  int64_t k = 0;
  for (int64_t i = 0; i < r; ++i) s.push_back(ins[i] ? 1 : x.dim(k++));
  c.set_output(0, x.reshaped(s));
}

}  // namespace

void register_reshape(KernelRegistry& r) {
  r.add("Reshape", k_reshape);
  r.add("Flatten", k_flatten);
  r.add("Squeeze", k_squeeze);
  r.add("Unsqueeze", k_unsqueeze);
}

}  // namespace fixpoint::ref
