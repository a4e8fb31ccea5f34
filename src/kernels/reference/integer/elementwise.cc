// Integer Add/Sub (16)-(17), Mul (18), Concat (§5.4), pools (§5.5-5.6), tables (20).
#include "../common.h"
#include "fixpoint/runtime.h"
#include "integer_kernels.h"

namespace fixpoint::qref {
namespace {

void k_addsub(QContext& c) {
  const QOp& op = c.op;
  const Tensor &a = *c.in[0], &b = *c.in[1];
  Shape ys = ref::broadcast(a.shape(), b.shape(), op.node);
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> qa = load_codes(a, c.in_q[0].zero_point), qb = load_codes(b, c.in_q[1].zero_point);
  const auto& p = op.as<params::AddSub>();
  __int128 A = p.A, B = p.B * p.sign;
  int L = static_cast<int>(p.L);
  fx::Range r = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  ref::for_each_broadcast<2>(ys, {a.shape(), b.shape()}, [&](int64_t o, const std::array<int64_t, 2>& off) {
    __int128 v = fx::rsh128(qa[off[0]] * A + qb[off[1]] * B, L);
    yq[o] = v < r.lo - zy ? r.lo : (v > r.hi - zy ? r.hi : static_cast<int64_t>(v) + zy);
  });
  store_codes(y, yq);
}

void k_mul(QContext& c) {
  const QOp& op = c.op;
  const Tensor &a = *c.in[0], &b = *c.in[1];
  Shape ys = ref::broadcast(a.shape(), b.shape(), op.node);
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> qa = load_codes(a, c.in_q[0].zero_point), qb = load_codes(b, c.in_q[1].zero_point);
  const auto& p = op.as<params::Mul>();
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  fx::Range r = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  bool wide = p.wide;
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  ref::for_each_broadcast<2>(ys, {a.shape(), b.shape()}, [&](int64_t o, const std::array<int64_t, 2>& off) {
    int64_t p = qa[off[0]] * qb[off[1]];
    yq[o] = wide ? fx::requantize_wide(p, mu, zy, r) : fx::requantize(p, mu, zy, r);
  });
  store_codes(y, yq);
}

// Div of two activations (32): q_y = SAT(R((q_a - z_a) m / ((q_b - z_b) 2^n)) + z_y), an exact
// ratio of integers rounded once; x / 0 saturates toward the sign of x (0 / 0 gives z_y).
void k_div(QContext& c) {
  const QOp& op = c.op;
  const Tensor &a = *c.in[0], &b = *c.in[1];
  Shape ys = ref::broadcast(a.shape(), b.shape(), op.node);
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> qa = load_codes(a, c.in_q[0].zero_point), qb = load_codes(b, c.in_q[1].zero_point);
  const auto& p = op.as<params::Div>();
  __int128 m = p.m;
  int n = static_cast<int>(p.n);
  __int128 num_shift = n < 0 ? __int128{1} << -n : 1, den_shift = n > 0 ? __int128{1} << n : 1;
  fx::Range r = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  ref::for_each_broadcast<2>(ys, {a.shape(), b.shape()}, [&](int64_t o, const std::array<int64_t, 2>& off) {
    __int128 num = qa[off[0]] * m * num_shift, den = qb[off[1]] * den_shift;
    if (den == 0) {
      yq[o] = num > 0 ? r.hi : num < 0 ? r.lo : fx::sat(zy, r);
      return;
    }
    __int128 v = fx::round_div(num, den);  // |v| <= |num| < 2^113
    yq[o] = v < r.lo - zy ? r.lo : (v > r.hi - zy ? r.hi : static_cast<int64_t>(v) + zy);
  });
  store_codes(y, yq);
}

// ReduceSum / ReduceMean (31): a = sum of (q - z) over the reduced axes (the reduction geometry
// of the float kernel, ref::plan_reduction), exact in int64; Sum: RQ(a) with M = s_x / s_y,
// Mean: R(a M / count) with the count dividing exactly (fx::requantize_mean).
void k_reduce(QContext& c) {
  const QOp& op = c.op;
  const auto& p = op.as<params::Reduce>();
  const Tensor& x = *c.in[0];
  FP_CHECK(x.numel() < (int64_t{1} << 36), op.node.label(), ": too many elements for an exact integer sum");
  std::vector<int64_t> axes = op.node.attr_ints("axes");
  if (!op.node.has_attr("axes") && c.in.size() > 1 && c.in[1]) axes = c.in[1]->to_i64_vector();
  ref::Reduction rd = ref::plan_reduction(op.node, x.shape(), axes);
  std::vector<int64_t> q = load_codes(x, c.in_q[0].zero_point);
  std::vector<int64_t> sum(static_cast<size_t>(shape_numel(rd.kept_shape)), 0);
  if (rd.noop) sum = q;
  else ref::for_each_reduced(x.shape(), rd, [&](int64_t i, int64_t o) { sum[o] += q[i]; });
  Tensor& y = c.output(0, rd.noop ? x.shape() : rd.out_shape);
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  fx::Range r = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point, count = rd.noop ? 1 : rd.count;
  std::vector<int64_t> yq(sum.size());
  for (size_t i = 0; i < sum.size(); ++i)
    yq[i] = p.mean ? fx::requantize_mean(sum[i], mu, std::max<int64_t>(count, 1), zy, r)
                   : fx::requantize_wide(sum[i], mu, zy, r);
  store_codes(y, yq);
}

// PRelu (33): q_y = RQ(q_x - z_x) with M = s_x / s_y where q_x >= z_x, else with
// M_k = slope_k s_x / s_y for the slope element k that x's position broadcasts to (a negative
// slope is its magnitude's multiplier applied to the negated value: R(a M) exactly).
void k_prelu(QContext& c) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const auto& p = op.as<params::PRelu>();
  const Tensor &mult = p.neg_mult, &shift = p.neg_shift, &sign = p.neg_sign;
  Tensor& y = c.output(0, x.shape());
  std::vector<int64_t> q = load_codes(x, c.in_q[0].zero_point);
  fx::Multiplier pos{p.m, static_cast<int>(p.n)};
  fx::Range r = clamp_range(p);
  int64_t zy = c.out_q[0].zero_point;
  bool wide = p.wide;
  auto rq = [&](int64_t a, const fx::Multiplier& mu) {
    return wide ? fx::requantize_wide(a, mu, zy, r) : fx::requantize(a, mu, zy, r);
  };
  std::vector<int64_t> yq(q.size());
  ref::for_each_broadcast<2>(x.shape(), {x.shape(), mult.shape()}, [&](int64_t o, const std::array<int64_t, 2>& off) {
    int64_t k = off[1];
    fx::Multiplier neg{mult.data<int64_t>()[k], static_cast<int>(shift.data<int64_t>()[k])};
    yq[o] = q[off[0]] >= 0 ? rq(q[off[0]], pos) : rq(sign.data<int64_t>()[k] * q[off[0]], neg);
  });
  store_codes(y, yq);
}

void k_concat(QContext& c) {
  const QOp& op = c.op;
  const Tensor& x0 = *c.in[0];
  int64_t axis = ref::norm_axis(op.node.attr_int("axis", 0), x0.rank(), op.node);
  Shape ys = x0.shape();
  ys[axis] = 0;
  for (const Tensor* t : c.in) {
    FP_CHECK(t->rank() == x0.rank(), op.node.label(), ": inputs differ in rank");
    ys[axis] += t->dim(axis);
  }
  Tensor& y = c.output(0, ys);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= ys[d];
  for (int64_t d = axis + 1; d < x0.rank(); ++d) inner *= ys[d];
  fx::Range r = fx::range_of(c.out_q[0].type);
  int64_t zy = c.out_q[0].zero_point, at = 0, orow = ys[axis] * inner;
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  for (size_t k = 0; k < c.in.size(); ++k) {
    std::vector<int64_t> q = load_codes(*c.in[k], c.in_q[k].zero_point);
    const auto& p = op.as<params::Concat>();
    fx::Multiplier mu{p.mult.data<int64_t>()[k], static_cast<int>(p.shift.data<int64_t>()[k])};
    int64_t row = c.in[k]->dim(axis) * inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < row; ++j) yq[o * orow + at + j] = fx::requantize(q[o * row + j], mu, zy, r);
    at += row;
  }
  store_codes(y, yq);
}

// AveragePool / GlobalAveragePool (19): a = sum of (q - z) over the window, R(a M / count) with
// M = s_x / s_y and the window's count dividing exactly (fx::requantize_mean).
void k_avgpool(QContext& c) {
  const QOp& op = c.op;
  const Node& n = op.node;
  const Tensor& x = *c.in[0];
  bool global = n.op_type == "GlobalAveragePool";
  FP_CHECK(x.rank() >= 3 && x.rank() <= 5, n.label(), ": input must be 3-D to 5-D");
  Node wn = n;
  if (global) {
    wn.attrs.clear();
    Attribute ks;
    ks.kind = Attribute::Kind::Ints;
    ks.ints.assign(x.shape().begin() + 2, x.shape().end());
    wn.attrs["kernel_shape"] = ks;
  }
  ref::Window w = ref::to_3d(ref::sliding_window(wn, x.shape(), {}, true));
  bool include_pad = wn.attr_int("count_include_pad", 0) != 0;
  Shape ys = {x.dim(0), x.dim(1)};
  for (size_t i = 3 - (x.rank() - 2); i < 3; ++i) ys.push_back(w.out[i]);
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> q = load_codes(x, c.in_q[0].zero_point);
  const auto& p = op.as<params::AvgPool>();
  fx::Multiplier mu{p.m, static_cast<int>(p.n)};
  fx::Range r = fx::range_of(c.out_q[0].type);
  int64_t zy = c.out_q[0].zero_point;
  int64_t in_plane = w.in[0] * w.in[1] * w.in[2], out_plane = w.out[0] * w.out[1] * w.out[2];
  std::vector<int64_t> yq(static_cast<size_t>(y.numel()));
  for (int64_t nc = 0; nc < x.dim(0) * x.dim(1); ++nc)
    for (int64_t od = 0; od < w.out[0]; ++od)
      for (int64_t oh = 0; oh < w.out[1]; ++oh)
        for (int64_t ow = 0; ow < w.out[2]; ++ow) {
          int64_t sum = 0, count = 0;
          const int64_t o3[3] = {od, oh, ow};
          int64_t padded = include_pad ? ref::padded_window_cells(w, o3) : 0;
          for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
            int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
            if (id < 0 || id >= w.in[0]) continue;
            for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
              int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
              if (ih < 0 || ih >= w.in[1]) continue;
              for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
                int64_t iw = ow * w.stride[2] - w.pad_begin[2] + kw * w.dilation[2];
                if (iw < 0 || iw >= w.in[2]) continue;
                sum += q[nc * in_plane + (id * w.in[1] + ih) * w.in[2] + iw];
                ++count;
              }
            }
          }
          int64_t div = include_pad ? padded : count;
          int64_t o = nc * out_plane + (od * w.out[1] + oh) * w.out[2] + ow;
          if (div == 0) {
            yq[o] = zy;
            continue;
          }
          yq[o] = fx::requantize_mean(sum, mu, div, zy, r);
        }
  store_codes(y, yq);
}

void k_globalmaxpool(QContext& c) {
  const Tensor& x = *c.in[0];
  FP_CHECK(x.rank() >= 2, c.op.node.label(), ": input must be N x C x ...");
  Shape ys = {x.dim(0), x.dim(1)};
  for (int64_t i = 2; i < x.rank(); ++i) ys.push_back(1);
  Tensor& y = c.output(0, ys);
  std::vector<int64_t> q = load_codes(x, 0);
  int64_t planes = x.dim(0) * x.dim(1), plane = planes ? x.numel() / planes : 0;
  std::vector<int64_t> yq(static_cast<size_t>(planes));
  for (int64_t p = 0; p < planes; ++p) yq[p] = plane ? *std::max_element(q.begin() + p * plane, q.begin() + (p + 1) * plane) : 0;
  store_codes(y, yq);
}

// (20): q_y = TAB[q_x - q_min(T_x)].
void k_lut(QContext& c) {
  const Tensor& x = *c.in[0];
  Tensor& y = c.output(0, x.shape());
  const auto& p = c.op.as<params::Table>();
  std::vector<int64_t> tab = load_codes(p.table, 0);  // output codes, any integer type
  std::vector<int64_t> q = load_codes(x, p.in_lo);
  for (auto& v : q) v = tab.at(static_cast<size_t>(v));
  store_codes(y, q);
}

}  // namespace

void register_elementwise_kernels(std::map<std::string, QKernelFn>& r) {
  r["addsub"] = k_addsub;
  r["mul"] = k_mul;
  r["div"] = k_div;
  r["reduce"] = k_reduce;
  r["prelu"] = k_prelu;
  r["concat"] = k_concat;
  r["avgpool"] = k_avgpool;
  r["globalmaxpool"] = k_globalmaxpool;
  r["lut"] = k_lut;
}

}  // namespace fixpoint::qref
