// Split along an axis: sizes from the 'split' input (opset >= 13) or attribute, else equal parts
// (opset 18 num_outputs: the last part may be smaller).
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_split(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  int64_t axis = norm_axis(n.attr_int("axis", 0), x.rank(), n);
  int64_t len = x.dim(axis);
  size_t parts = c.num_outputs();
  bool has = false;
  std::vector<int64_t> sizes = ints_from_input_or_attr(c, 1, "split", &has);
  if (!has || sizes.empty()) {
    int64_t each = (len + static_cast<int64_t>(parts) - 1) / static_cast<int64_t>(parts);
    if (!n.has_attr("num_outputs"))
      FP_CHECK(len % static_cast<int64_t>(parts) == 0, n.label(), ": axis of size ", len, " does not split into ",
               parts, " equal parts");
    sizes.clear();
    for (size_t i = 0; i < parts; ++i) sizes.push_back(std::clamp<int64_t>(len - each * static_cast<int64_t>(i), 0, each));
  }
  FP_CHECK(sizes.size() == parts, n.label(), ": split has ", sizes.size(), " sizes for ", parts, " outputs");
  int64_t total = 0;
  for (int64_t s : sizes) {
    FP_CHECK(s >= 0, n.label(), ": negative split size");
    total += s;
  }
  FP_CHECK(total == len, n.label(), ": split sizes sum to ", total, ", axis has ", len);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  size_t es = dtype_size(x.dtype());
  const char* px = static_cast<const char*>(x.raw());
  int64_t at = 0;
  for (size_t k = 0; k < parts; ++k) {
    Shape ys = x.shape();
    ys[axis] = sizes[k];
    if (c.wants_output(k)) {
      Tensor& y = c.output(k, x.dtype(), ys);
      int64_t row = sizes[k] * inner;
      for (int64_t o = 0; o < outer && row > 0; ++o)
        std::memcpy(static_cast<char*>(y.raw()) + o * row * es, px + (o * len * inner + at) * es, row * es);
    }
    at += sizes[k] * inner;
  }
}

}  // namespace

void register_split(KernelRegistry& r) { r.add("Split", k_split); }

}  // namespace fixpoint::ref
