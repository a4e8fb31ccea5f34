// Resize (opset 10, 11-18) and Upsample (opset 7-9): nearest, (n-)linear and cubic, every
// coordinate_transformation_mode. The op is separable: each output coordinate on each axis
// maps to a few (input index, weight) taps; an output value is the weighted sum over the
// product of its per-axis taps.
#include <cstring>
#include <limits>

#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

struct ResizeSpec {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0.0;
  bool exclude_outside = false;
  bool legacy_nearest = false;  // opset < 11 Resize / Upsample: floor (ceil when downsampling)
};

int64_t nearest_index(const ResizeSpec& s, double x, bool down) {
  if (s.legacy_nearest) return down ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(x);
  if (s.nearest == "floor") return static_cast<int64_t>(std::floor(x));
  if (s.nearest == "ceil") return static_cast<int64_t>(std::ceil(x));
  double fl = std::floor(x);
  if (x - fl == 0.5) return static_cast<int64_t>(s.nearest == "round_prefer_ceil" ? fl + 1 : fl);
  return static_cast<int64_t>(std::round(x));
}

std::vector<double> cubic_weights(double t, double a) {
  auto k = [a](double d) {
    d = std::abs(d);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0.0;
  };
  return {k(t + 1), k(t), k(1 - t), k(2 - t)};
}

std::vector<std::vector<ResizeTap>> axis_taps(const ResizeSpec& s, const Node& n, int64_t in, int64_t out, double scale,
                                        double roi_start, double roi_end) {
  std::vector<std::vector<ResizeTap>> taps(out);
  for (int64_t o = 0; o < out; ++o) {
    double x;
    const std::string& m = s.coord;
    if (m == "half_pixel") x = (o + 0.5) / scale - 0.5;
    else if (m == "pytorch_half_pixel") x = out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
    // align_corners uses the unrounded resized length in * scale (ONNX reference semantics).
    else if (m == "align_corners") x = out == 1 ? 0.0 : o * static_cast<double>(in - 1) / (in * scale - 1.0);
    else if (m == "asymmetric") x = o / scale;
    else if (m == "tf_half_pixel_for_nn") x = (o + 0.5) / scale;
    else if (m == "tf_crop_and_resize")
      x = out > 1 ? roi_start * (in - 1) + o * (roi_end - roi_start) * (in - 1) / static_cast<double>(out - 1)
                  : 0.5 * (roi_start + roi_end) * (in - 1);
    else fail(n.label(), ": unknown coordinate_transformation_mode '", m, "'");
    auto& t = taps[o];
    if (m == "tf_crop_and_resize" && (x < 0 || x > in - 1)) {
      t.push_back({-1, 1.0});
      continue;
    }
    if (s.mode == "nearest") {
      int64_t i = std::clamp<int64_t>(nearest_index(s, x, scale < 1.0), 0, in - 1);
      t.push_back({i, 1.0});
    } else if (s.mode == "linear") {
      double xc = std::clamp(x, 0.0, static_cast<double>(in - 1));
      int64_t i0 = static_cast<int64_t>(std::floor(xc));
      int64_t i1 = std::min(i0 + 1, in - 1);
      double w1 = xc - i0;
      t.push_back({i0, 1.0 - w1});
      // Also when w1 = 0 (a clamped border, an aligned position): 0 * NaN and 0 * Inf are NaN,
      // as in ONNX Runtime. An axis of one element (or not resized) has a single tap.
      if (w1 != 0.0 || i1 != i0) t.push_back({i1, w1});
    } else if (s.mode == "cubic") {
      int64_t i0 = static_cast<int64_t>(std::floor(x));
      std::vector<double> w = cubic_weights(x - i0, s.cubic_a);
      double total = 0;
      for (int k = 0; k < 4; ++k) {
        int64_t i = i0 - 1 + k;
        if (s.exclude_outside && (i < 0 || i >= in)) continue;
        t.push_back({std::clamp<int64_t>(i, 0, in - 1), w[k]});
        total += w[k];
      }
      if (s.exclude_outside && total != 0)
        for (auto& tp : t) tp.weight /= total;
    } else {
      fail(n.label(), ": unknown mode '", s.mode, "'");
    }
  }
  return taps;
}

ResizePlan plan_impl(const Node& n, const Shape& xs, const ResizeSpec& spec, std::vector<double> scales, Shape sizes,
                     std::vector<double> roi) {
  int64_t r = static_cast<int64_t>(xs.size());
  if (!sizes.empty()) {
    FP_CHECK(static_cast<int64_t>(sizes.size()) == r, n.label(), ": sizes has ", sizes.size(), " values for rank ", r);
    scales.resize(r);
    for (int64_t d = 0; d < r; ++d) {
      FP_CHECK(sizes[d] >= 0 && sizes[d] <= (int64_t{1} << 24), n.label(), ": invalid output size ", sizes[d]);
      scales[d] = xs[d] ? static_cast<double>(sizes[d]) / static_cast<double>(xs[d]) : 1.0;
    }
  } else {
    FP_CHECK(static_cast<int64_t>(scales.size()) == r, n.label(), ": scales has ", scales.size(), " values for rank ", r);
    sizes.resize(r);
    for (int64_t d = 0; d < r; ++d) {
      FP_CHECK(scales[d] > 0 && scales[d] < 1e6, n.label(), ": invalid scale ", scales[d]);
      sizes[d] = static_cast<int64_t>(std::floor(xs[d] * scales[d]));
    }
  }
  if (roi.empty()) {
    roi.assign(r, 0.0);
    roi.resize(2 * r, 1.0);
  }
  FP_CHECK(static_cast<int64_t>(roi.size()) == 2 * r, n.label(), ": roi has ", roi.size(), " values, expected ", 2 * r);
  ResizePlan p;
  p.out = sizes;
  p.mode = spec.mode;
  p.coord = spec.coord;
  p.extrapolation = spec.extrapolation;
  p.taps.resize(r);
  for (int64_t d = 0; d < r; ++d) p.taps[d] = axis_taps(spec, n, xs[d], sizes[d], scales[d], roi[d], roi[d + r]);
  return p;
}

void resize_impl(KernelContext& c, const ResizePlan& plan) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  int64_t r = x.rank();
  const Shape& sizes = plan.out;
  const auto& taps = plan.taps;
  Tensor& y = c.output(0, x.dtype(), sizes);
  if (y.numel() == 0) return;
  std::vector<int64_t> xst = strides_of(x.shape());
  // One tap of weight 1 on every axis (nearest, and any copying geometry): the weighted sum below
  // is that element itself, so copy it (the same bits, much faster on large maps).
  bool copy = r > 0;
  for (const auto& axis : taps)
    for (const auto& t : axis) copy = copy && t.size() == 1 && t[0].weight == 1.0 && t[0].index >= 0;
  if (copy) {
    size_t es = dtype_size(x.dtype());
    const char* px = static_cast<const char*>(x.raw());
    char* py = static_cast<char*>(y.raw());
    int64_t last = sizes[r - 1];
    std::vector<int64_t> col(static_cast<size_t>(last));  // input offset of each output column
    for (int64_t j = 0; j < last; ++j) col[static_cast<size_t>(j)] = taps[r - 1][j][0].index * xst[r - 1];
    // One output row from the input row at `base`, in the element's own type (no call per element).
    auto gather = [&](auto tag, int64_t base, int64_t o) {
      using E = decltype(tag);
      const E* src = reinterpret_cast<const E*>(px) + base;
      E* dst = reinterpret_cast<E*>(py) + o;
      for (int64_t j = 0; j < last; ++j) dst[j] = src[col[static_cast<size_t>(j)]];
    };
    std::vector<int64_t> idx(r, 0);
    int64_t prev = -1;
    for (int64_t o = 0; o < y.numel(); o += last) {
      int64_t base = 0;
      for (int64_t d = 0; d < r - 1; ++d) base += taps[d][idx[d]][0].index * xst[d];
      if (base == prev) {  // the same input row as the row before (upsampling): copy that row
        std::memcpy(py + o * es, py + (o - last) * es, static_cast<size_t>(last) * es);
      } else if (es == 1) {
        gather(uint8_t{}, base, o);
      } else if (es == 2) {
        gather(uint16_t{}, base, o);
      } else if (es == 4) {
        gather(uint32_t{}, base, o);
      } else if (es == 8) {
        gather(uint64_t{}, base, o);
      } else {
        for (int64_t j = 0; j < last; ++j)
          std::memcpy(py + (o + j) * es, px + (base + col[static_cast<size_t>(j)]) * es, es);
      }
      prev = base;
      for (int64_t d = r - 2; d >= 0; --d) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
    return;
  }
  dispatch_numeric(x.dtype(), n, [&](auto tag) {
    using T = decltype(tag);
    using Nm = Num<T>;
    using A = typename Nm::C;
    const T* px = x.data<T>();
    T* py = y.data<T>();
    // Each output: the sum over the product of its taps on every axis.
    double acc = 0;
    bool outside = false;
    walk_resize(
        sizes, taps,
        [&](const std::vector<const ResizeTap*>& combo) {
          double w = 1.0;
          int64_t off = 0;
          for (int64_t d = 0; d < r; ++d) {
            if (combo[d]->index < 0) outside = true;
            w *= combo[d]->weight;
            off += combo[d]->index * xst[d];
          }
          if (outside) return false;
          acc += w * static_cast<double>(Nm::load(px[off]));
          return true;
        },
        [&](int64_t o) {
          if (outside) acc = plan.extrapolation;
          if constexpr (std::is_integral_v<A>) acc = std::round(acc);
          py[o] = Nm::store(static_cast<A>(acc));
          acc = 0;
          outside = false;
        });
  });
}

std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.get_f64(i);
  return v;
}

ResizePlan make_plan(const Node& n, const Shape& xs, const Tensor* in1, const Tensor* in2, const Tensor* in3) {
  ResizeSpec s;
  s.mode = n.attr_string("mode", "nearest");
  if (s.mode == "bilinear" || s.mode == "trilinear") s.mode = "linear";
  std::vector<double> scales, roi;
  Shape sizes;
  if (n.op_type == "Upsample") {
    s.coord = "asymmetric";
    s.legacy_nearest = true;
    if (n.opset >= 9) scales = to_doubles(*in1);
    else
      for (float f : n.attr_floats("scales")) scales.push_back(f);
    return plan_impl(n, xs, s, scales, {}, {});
  }
  FP_CHECK(n.attr_int("antialias", 0) == 0, n.label(), ": antialias is not supported");
  FP_CHECK(!n.has_attr("axes"), n.label(), ": the 'axes' attribute (opset 18) is not supported");
  if (n.opset < 11) {
    s.coord = "asymmetric";
    s.legacy_nearest = true;
    scales = to_doubles(*in1);
  } else {
    s.coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
    s.nearest = n.attr_string("nearest_mode", "round_prefer_floor");
    s.cubic_a = n.attr_float("cubic_coeff_a", -0.75f);
    s.exclude_outside = n.attr_int("exclude_outside", 0) != 0;
    s.extrapolation = n.attr_float("extrapolation_value", 0.0f);
    if (in1 && in1->numel()) roi = to_doubles(*in1);
    if (in2 && in2->numel()) scales = to_doubles(*in2);
    if (in3 && in3->numel()) sizes = in3->to_i64_vector();
    FP_CHECK(scales.empty() != sizes.empty(), n.label(), ": exactly one of scales and sizes must be given");
  }
  return plan_impl(n, xs, s, scales, sizes, roi);
}

void k_resize(KernelContext& c) {
  resize_impl(c, make_plan(c.node, c.in(0).shape(), c.input(1), c.input(2), c.input(3)));
}

}  // namespace

ResizePlan resize_plan(const Node& n, const Shape& x, const std::vector<const Tensor*>& inputs) {
  auto in = [&](size_t i) { return i < inputs.size() ? inputs[i] : nullptr; };
  return make_plan(n, x, in(1), in(2), in(3));
}

void register_resize(KernelRegistry& r) {
  r.add("Resize", k_resize);
  r.add("Upsample", k_resize);
}

}  // namespace fixpoint::ref
