// Constant, ConstantOfShape, Shape, Size, Identity, Dropout (inference: identity).
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_constant(KernelContext& c) {
  const Node& n = c.node;
  if (const Attribute* a = n.find_attr("value")) {
    FP_CHECK(a->kind == Attribute::Kind::Tensor, n.label(), ": 'value' must be a tensor");
    c.set_output(0, a->t);
  } else if (n.has_attr("value_float")) {
    c.set_output(0, Tensor::scalar_f32(n.attr_float("value_float", 0)));
  } else if (n.has_attr("value_floats")) {
    std::vector<float> v = n.attr_floats("value_floats");
    c.set_output(0, Tensor::from_f32(v, {static_cast<int64_t>(v.size())}));
  } else if (n.has_attr("value_int")) {
    c.set_output(0, Tensor::from_i64({n.attr_int("value_int", 0)}, {}));
  } else if (n.has_attr("value_ints")) {
    std::vector<int64_t> v = n.attr_ints("value_ints");
    c.set_output(0, Tensor::from_i64(v, {static_cast<int64_t>(v.size())}));
  } else {
    fail(n.label(), ": no supported value attribute (value, value_float(s), value_int(s))");
  }
}

void k_constant_of_shape(KernelContext& c) {
  std::vector<int64_t> s = c.in(0).to_i64_vector();
  for (int64_t d : s) FP_CHECK(d >= 0, c.node.label(), ": negative dimension ", d);
  const Attribute* a = c.node.find_attr("value");
  if (!a) {
    c.output(0, DType::Float32, s);
    return;
  }
  FP_CHECK(a->kind == Attribute::Kind::Tensor && a->t.numel() == 1, c.node.label(), ": 'value' must be a 1-element tensor");
  Tensor& y = c.output(0, a->t.dtype(), s);
  size_t es = dtype_size(y.dtype());
  for (int64_t i = 0; i < y.numel(); ++i) std::memcpy(static_cast<char*>(y.raw()) + i * es, a->t.raw(), es);
}

void k_shape(KernelContext& c) {
  const Tensor& x = c.in(0);
  int64_t r = x.rank();
  int64_t start = c.node.attr_int("start", 0), end = c.node.attr_int("end", r);
  auto clampi = [r](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
  start = clampi(start);
  end = clampi(end);
  std::vector<int64_t> v;
  for (int64_t i = start; i < end; ++i) v.push_back(x.dim(i));
  c.set_output(0, Tensor::from_i64(v, {static_cast<int64_t>(v.size())}));
}

void k_size(KernelContext& c) { c.set_output(0, Tensor::from_i64({c.in(0).numel()}, {})); }

void k_identity(KernelContext& c) { c.set_output(0, c.in(0)); }

void k_dropout(KernelContext& c) {
  // Inference only: training-mode dropout is random and has no place in a reference run.
  // With ratio 0 training mode is deterministic (keeps everything).
  const Tensor* ratio = c.input(1);
  bool zero_ratio = ratio && ratio->numel() == 1 && ratio->get_f64(0) == 0.0;
  if (const Tensor* t = c.input(2); t && t->numel() == 1 && t->get_f64(0) != 0 && !zero_ratio)
    fail(c.node.label(), ": training_mode=true (random dropout) is not supported");
  c.set_output(0, c.in(0));
  if (c.wants_output(1)) {
    Tensor& m = c.output(1, c.node.opset >= 10 ? DType::Bool : c.in(0).dtype(), c.in(0).shape());
    for (int64_t i = 0; i < m.numel(); ++i) m.set_f64(i, 1.0);
  }
}

}  // namespace

void register_constant(KernelRegistry& r) {
  r.add("Constant", k_constant);
  r.add("ConstantOfShape", k_constant_of_shape);
  r.add("Shape", k_shape);
  r.add("Size", k_size);
  r.add("Identity", k_identity);
  r.add("Dropout", k_dropout);
}

}  // namespace fixpoint::ref
