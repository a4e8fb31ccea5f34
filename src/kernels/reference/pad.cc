// Pad: constant, reflect, edge and wrap modes; negative pads crop. Pads come from the
// 'paddings' (opset 1) or 'pads' attribute (opset 2-10) or the pads input (opset >= 11, with
// optional constant_value and axes inputs).
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_pad(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  int64_t r = x.rank();
  std::vector<int64_t> pads;
  double value = 0;
  if (n.opset < 11) {
    pads = n.attr_ints(n.has_attr("pads") ? "pads" : "paddings");
    value = n.attr_float("value", 0.0f);
  } else {
    pads = c.in(1).to_i64_vector();
    if (const Tensor* v = c.input(2); v && v->numel() > 0) value = v->get_f64(0);
    if (const Tensor* ax = c.input(3)) {
      std::vector<int64_t> axes = ax->to_i64_vector();
      FP_CHECK(pads.size() == 2 * axes.size(), n.label(), ": pads has ", pads.size(), " values for ", axes.size(), " axes");
      std::vector<int64_t> full(2 * r, 0);
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t a = norm_axis(axes[i], r, n, "axes entry");
        full[a] = pads[i];
        full[a + r] = pads[i + axes.size()];
      }
      pads = full;
    }
  }
  FP_CHECK(static_cast<int64_t>(pads.size()) == 2 * r, n.label(), ": pads has ", pads.size(), " values, expected ", 2 * r);
  std::string mode = n.attr_string("mode", "constant");
  FP_CHECK(mode == "constant" || mode == "reflect" || mode == "edge" || mode == "wrap", n.label(), ": unknown mode '",
           mode, "'");
  Shape ys(r);
  for (int64_t d = 0; d < r; ++d) {
    FP_CHECK(pads[d] <= (int64_t{1} << 24) && pads[d + r] <= (int64_t{1} << 24), n.label(), ": absurd pads");
    ys[d] = x.dim(d) + pads[d] + pads[d + r];
    FP_CHECK(ys[d] >= 0, n.label(), ": pads crop axis ", d, " below zero");
    if (mode != "constant" && ys[d] > 0)
      FP_CHECK(x.dim(d) > 0, n.label(), ": cannot ", mode, "-pad an empty axis");
    if (mode == "reflect")
      FP_CHECK(x.dim(d) > 1 || (pads[d] <= 0 && pads[d + r] <= 0), n.label(), ": reflect needs axis size > 1");
  }
  Tensor& y = c.output(0, x.dtype(), ys);
  if (y.numel() == 0) return;
  Tensor fill(x.dtype(), {});
  fill.set_f64(0, value);
  size_t es = dtype_size(x.dtype());
  std::vector<int64_t> xst = strides_of(x.shape());
  const char* px = static_cast<const char*>(x.raw());
  char* py = static_cast<char*>(y.raw());
  std::vector<int64_t> idx(r, 0);
  for (int64_t o = 0; o < y.numel(); ++o) {
    int64_t off = 0;
    bool outside = false;
    for (int64_t d = 0; d < r && !outside; ++d) {
      int64_t i = idx[d] - pads[d], len = x.dim(d);
      if (i < 0 || i >= len) {
        if (mode == "constant") { outside = true; break; }
        if (mode == "edge") i = i < 0 ? 0 : len - 1;
        else if (mode == "wrap") i = ((i % len) + len) % len;
        else {  // reflect without repeating the edge: period 2*(len-1)
          int64_t p = 2 * (len - 1);
          i = ((i % p) + p) % p;
          if (i >= len) i = p - i;
        }
      }
      off += i * xst[d];
    }
    std::memcpy(py + o * es, outside ? static_cast<const char*>(fill.raw()) : px + off * es, es);
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++idx[d] < ys[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

void register_pad(KernelRegistry& r) { r.add("Pad", k_pad); }

}  // namespace fixpoint::ref
