// Conv, ConvTranspose, Gemm and MatMul with constant weights: (9)-(15), §4.
#include "quantize/prepare/prepare.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "fixpoint/conv_layout.h"
#include "quantize/activation_fusion.h"

namespace fixpoint {

namespace {

// §2.6: the scale a QDQ model gave output channel c of n's weights, when its width is wt.
std::optional<double> qdq_weight_scale(const CompileContext& cx, const Node& n, int64_t c, int64_t N, DType wt) {
  auto it = cx.qdq.weights.find(n.inputs[1]);
  if (it == cx.qdq.weights.end() || dtype_size(it->second.type) != dtype_size(wt)) return std::nullopt;
  const auto& s = it->second.scales;
  if (s.size() == 1) return s[0];
  // Per channel: the axis holding the output channels (Conv: 0; MatMul [K, N]: 1; Gemm: by transB).
  int64_t out_axis = n.op_type == "Conv" ? 0 : n.op_type == "Gemm" && n.attr_int("transB", 0) ? 0 : 1;
  if (n.op_type == "ConvTranspose" || it->second.axis != out_axis || static_cast<int64_t>(s.size()) != N) return std::nullopt;
  return s[static_cast<size_t>(c)];
}

}  // namespace

// Conv / Gemm / MatMul with constant weights: (9)-(15).
bool prepare_matmul_like(CompileContext& cx, QOp& op) {
  const Node& n = op.node;
  if (!cx.all_inputs_quantized(n, 1) || n.inputs.size() < 2 || !cx.g.initializers.count(n.inputs[1])) return false;
  const Tensor& w = cx.g.initializers.at(n.inputs[1]);
  if (w.dtype() != DType::Float32) return false;
  const Tensor* b = n.inputs.size() > 2 && !n.inputs[2].empty() && cx.g.initializers.count(n.inputs[2])
                        ? &cx.g.initializers.at(n.inputs[2]) : nullptr;
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && !b) return false;
  // Normalize to W[N][K] (per output channel rows) and bias[N]; each row's largest |w|.
  int64_t N, K, ks = 1;  // ks: a ConvTranspose's kernel elements per input channel
  double beta = 1.0;
  if (n.op_type == "ConvTranspose") {
    if (w.rank() < 3) return false;
    int64_t group = n.attr_int("group", 1), C = w.dim(0), mg = w.dim(1);
    N = mg * group;
    ks = w.numel() / (C * mg);
    K = C / group * ks;
    if (b && b->numel() != N) return false;
  } else if (n.op_type == "Gemm") {
    if (n.attr_int("transA", 0) || w.rank() != 2) return false;
    beta = n.attr_float("beta", 1.0f);
    bool tb = n.attr_int("transB", 0) != 0;
    N = tb ? w.dim(0) : w.dim(1);
    K = tb ? w.dim(1) : w.dim(0);
    if (b && b->numel() != N && b->numel() != 1) return false;
  } else if (n.op_type == "MatMul") {  // constant 2-D B
    if (w.rank() != 2) return false;
    K = w.dim(0);
    N = w.dim(1);
  } else {
    N = w.dim(0);
    K = w.numel() / N;
  }
  struct Rows {
    Tensor wn;                  // [N, K] float
    std::vector<double> amax;   // per row
  };
  auto rows = prepared_value<Rows>(cx.prepared.get(), cat("rows|", n.name, '|', n.inputs[1]), [&]() {
    Rows r;
    if (n.op_type == "Conv") {
      r.wn = w;
    } else if (n.op_type == "ConvTranspose") {
      // W[C, M/g, k...] -> one row per output channel m: W'[m][(c - g cg) k_size + k] (22).
      int64_t cg = K / ks;
      r.wn = Tensor(DType::Float32, {N, K});
      for (int64_t m = 0; m < N; ++m)
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t k = 0; k < ks; ++k)
            r.wn.data<float>()[m * K + ci * ks + k] = w.data<float>()[conv_layout::transpose_weight_index(n, w, m, ci, k)];
    } else if (n.op_type == "Gemm") {
      double alpha = n.attr_float("alpha", 1.0f);
      bool tb = n.attr_int("transB", 0) != 0;
      r.wn = Tensor(DType::Float32, {N, K});
      for (int64_t i = 0; i < N; ++i)
        for (int64_t k = 0; k < K; ++k)
          r.wn.data<float>()[i * K + k] = static_cast<float>(alpha * w.get_f64(tb ? i * K + k : k * N + i));
    } else {
      r.wn = Tensor(DType::Float32, {N, K});
      for (int64_t i = 0; i < N; ++i)
        for (int64_t k = 0; k < K; ++k) r.wn.data<float>()[i * K + k] = w.data<float>()[k * N + i];
    }
    r.amax.assign(static_cast<size_t>(N), 0.0);
    for (int64_t c = 0; c < N; ++c)
      for (int64_t k = 0; k < K; ++k)
        r.amax[c] = std::max(r.amax[c], std::abs(static_cast<double>(r.wn.data<float>()[c * K + k])));
    return r;
  });
  const Tensor& wn = rows->wn;
  if (n.op_type == "MatMul" && !b) b = fuse_bias_add(cx, op, N);
  QParams qx = cx.q_of(n.inputs[0]);
  double lo, hi;
  std::string out = fuse_activation(cx, op, &lo, &hi);
  if (std::isfinite(lo) && lo >= 0) cx.nonneg.insert(out);  // fused Relu/Clip >= 0: unsigned output
  QParams qy = activation_qparams(cx, out, out_bits(cx, op, out));
  cx.set_q(out, qy);
  DType wt = params16(cx, n) ? DType::Int16 : DType::Int8;
  bool wide = op.bits == 16 || wt == DType::Int16 || qx.bits() == 16;
  Tensor bias(DType::Int64, {N}), mult(DType::Int64, {N}), shift(DType::Int64, {N});
  Tensor wscale(DType::Float64, {N});
  int64_t max_product = (std::max(std::abs(fx::range_of(qx.type).lo), fx::range_of(qx.type).hi)) * (fx::range_of(wt).hi + 1);
  int64_t clipped_bias = 0;
  std::vector<double> bvs(static_cast<size_t>(N));
  // §2.5: per output channel, or with --per-tensor-weights the layer's largest |w| for every row.
  double layer_amax = rows->amax.empty() ? 0.0 : *std::max_element(rows->amax.begin(), rows->amax.end());
  for (int64_t c = 0; c < N; ++c) {
    double bv = b ? beta * b->get_f64(b->numel() == 1 ? 0 : c) : 0.0;
    bvs[c] = bv;
    std::optional<double> fixed_sw = qdq_weight_scale(cx, n, c, N, wt);
    double sw = fixed_sw.value_or(weight_scale(cx.opts.per_tensor_weights ? layer_amax : rows->amax[c], wt, cx.pow2));
    // §4: the bias code (11) must fit the int64 accumulator: s_w >= |b| / (2^62 s_x). Where
    // that binds (a tiny input scale, a channel with near-zero weights and a real bias), the
    // weights' contribution is below 2^-55 of the bias, and coarser weight codes lose nothing.
    double sw_floor = std::abs(bv) / (0x1p62 * qx.scale) * (1 + 1e-9);
    if (!fixed_sw && sw < sw_floor) sw = cx.pow2 ? std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(sw_floor)))) : sw_floor;
    wscale.data<double>()[c] = sw;
  }
  const std::vector<double> sws(wscale.data<double>(), wscale.data<double>() + N);
  Tensor qw = *prepared_value<Tensor>(
      cx.prepared.get(), cat("weights|", n.name, '|', n.inputs[1], '|', static_cast<int>(wt), '|', PreparedCache::key_of(sws)),
      [&]() {
        Tensor q(wt, wn.shape());
        for (int64_t c = 0; c < N; ++c)
          for (int64_t k = 0; k < K; ++k)
            q.set_f64(c * K + k, static_cast<double>(fx::quantize(wn.data<float>()[c * K + k], sws[c], 0, fx::range_of(wt))));
        return q;
      });
  for (int64_t c = 0; c < N; ++c) {
    double bv = bvs[c], sw = sws[c];
    // (11) in the int64 range first: a tiny input scale makes a large bias code, which the
    // accumulator must then hold exactly (it widens below) rather than clip.
    int64_t qb = fx::quantize(bv, qx.scale * sw, 0, fx::range_of(DType::Int64));
    bias.data<int64_t>()[c] = qb;
    if (std::abs(bv / (qx.scale * sw)) >= 0x1p62) ++clipped_bias;
    // §4: int32 accumulation must not overflow.
    // (in 128 bits: a clipped bias code is +-2^63, beyond int64's sums and std::abs)
    __int128 reach_acc = static_cast<__int128>(K) * max_product + (qb < 0 ? -static_cast<__int128>(qb) : qb);
    if (!wide && reach_acc >= (int64_t{1} << 31)) wide = true;
  }
  // (12) with n bounded by the product's width (§4): 128-bit products keep tiny ratios exact.
  int max_shift = wide ? fx::kMaxShift128 : fx::kMaxShift64;
  int64_t weak_multipliers = 0;
  for (int64_t c = 0; c < N; ++c) {
    double M = qx.scale * wscale.data<double>()[c] / qy.scale;
    fx::Multiplier mu = fx::make_multiplier(M, cx.pow2 && is_pow2(M), max_shift);
    mult.data<int64_t>()[c] = mu.m;
    shift.data<int64_t>()[c] = mu.n;
    // A coarse multiplier matters only where the channel's accumulator can reach an output step.
    double reach = M * (static_cast<double>(K * max_product) + std::abs(static_cast<double>(bias.data<int64_t>()[c])));
    if (!cx.pow2 && mu.m < (int64_t{1} << 15) && reach >= 1.0) ++weak_multipliers;
  }
  if (clipped_bias)
    cx.warn_precision(n.name, cat(clipped_bias, " of ", N, " bias code(s) exceed the int64 accumulator (input scale ",
                               qx.scale, "): those channels' biases are clipped"));
  if (weak_multipliers)
    cx.warn_precision(n.name, cat(weak_multipliers, " of ", N, " requantization multiplier(s) keep fewer than 15 significant bits",
                               " (input scale ", qx.scale, ", output scale ", qy.scale, ")"));
  params::Weighted pw;
  pw.weight = qw;
  pw.bias = bias;
  pw.mult = mult;
  pw.shift = shift;
  pw.weight_scale = wscale;
  pw.wide = wide;
  pw.weight_bits = wt == DType::Int16 ? 16 : 8;
  set_clamp(pw, qy, lo, hi);
  if (n.op_type == "Conv") {
    op.params = params::Conv{pw};
  } else if (n.op_type == "ConvTranspose") {
    params::ConvTranspose ct;
    static_cast<params::Weighted&>(ct) = pw;
    ct.mg = w.dim(1);
    ct.kernel_shape = Tensor::from_i64(Shape(w.shape().begin() + 2, w.shape().end()), {w.rank() - 2});
    op.params = ct;
  } else {
    op.params = params::MatMul{pw};
  }
  cx.original_weight[n.name] = n.inputs[1];
  op.node.inputs.resize(1);  // weights and bias are prepared constants now
  return true;
}

}  // namespace fixpoint
