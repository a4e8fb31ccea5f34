// Adaptive weight rounding (docs/arithmetic.md (10c)): AdaRound's layer objective (Nagel et al.,
// 2020), each code floor or ceil of w / s_w, chosen to minimize the layer's output error on the
// calibration samples; optimized by greedy coordinate descent on the exact quadratic instead of
// AdaRound's relaxed sigmoid and gradient descent (no autodiff here, and the quadratic is exact).
#include "quantize/adaptive_rounding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "fixpoint/fixedpoint.h"
#include "fixpoint/float_kernels.h"
#include "fixpoint/parallel.h"
#include "fixpoint/runtime.h"
#include "kernels/reference/common.h"
#include "quantize/weight_rows.h"

namespace fixpoint {
namespace {

constexpr size_t kMaxSamples = 32;             // calibration samples the input patches come from
constexpr int64_t kMaxRow = 4608;              // longer rows (3x3x512) keep nearest rounding
constexpr int64_t kChunkDoubles = int64_t{32} << 20;  // H entries accumulated per float pass (256 MB)
constexpr int kMaxSweeps = 8;                  // coordinate-descent sweeps per output channel
constexpr int64_t kBlockChannels = 8;          // channels whose H d one pass over H computes
// A block of patches whose H update (nb K^2 products) is below this runs on the calling thread:
// smaller ones cost less than waking the pool (a depthwise layer's one-patch updates, K = 9).
constexpr int64_t kThreadedProducts = int64_t{1} << 22;
// A layer's H kept in the job's cache up to this size (32 MB), so a later compile whose weight
// scales differ (a channel of near-zero weights takes its scale from the input's, §4) rounds again
// without a float pass.
constexpr int64_t kKeepDoubles = int64_t{1} << 22;

// Patches per layer over all samples: a few per weight of a row, so H (Kg x Kg) is well
// determined (with fewer patches than weights, any rounding fits the samples).
int64_t wanted_patches(int64_t Kg) { return std::clamp<int64_t>(16 * Kg, 4096, 65536); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// g[j] += h[j] a for j < n: the inner loop of H d and of every flip. Each
// g[j] takes one product and one addition whichever clone runs (this file is built with
// -ffp-contract=off: no fused multiply-add), so the sums, and the codes, do not depend on the CPU.
__attribute__((target_clones("avx512f", "avx2", "default"))) void add_scaled(double* g, const double* h, double a,
                                                                            int64_t n) {
  for (int64_t j = 0; j < n; ++j) g[j] += h[j] * a;
}

// H[i][j] += p[i] p[j] summed over nb patches P ([nb][K]) for rows i0 .. i0 + 3 and j >= i (the
// upper triangle; the entries below the diagonal inside diagonal tiles are summed too, and later
// overwritten by the mirror of the upper ones). Register tiles of 4 x 8 entries; each entry still
// adds its patches' products one at a time in patch order (no fused multiply-add, as add_scaled),
// so H is the same as row-by-row accumulation gives. (A patch entry of 0 adds +-0, which changes
// no sum: skipping it, as before, gave the same H.)
constexpr int kTileRows = 4, kTileCols = 8;
__attribute__((target_clones("avx512f", "avx2", "default"))) void add_outer_products_rows(double* H, const double* P,
                                                                                         int64_t nb, int64_t K,
                                                                                         int64_t i0) {
  constexpr int R = kTileRows, C = kTileCols;
  const int64_t ri = std::min<int64_t>(R, K - i0);
  for (int64_t j0 = i0 / C * C; j0 < K; j0 += C) {
    const int64_t cj = std::min<int64_t>(C, K - j0);
    if (ri == R && cj == C) {
      // GCC vector types, not the loop vectorizer: GCC 12 at -O3 vectorized the patch loop of the
      // plain-array version two patches at a time and read one patch past the block's end
      // (a segfault compiling DenseNet-121, K = 992, 16 patches).
      typedef double Row __attribute__((vector_size(C * sizeof(double))));
      Row acc[R];
      for (int r = 0; r < R; ++r) std::memcpy(&acc[r], H + (i0 + r) * K + j0, sizeof(Row));
      for (int64_t b = 0; b < nb; ++b) {
        const double* p = P + b * K;
        Row pj;
        std::memcpy(&pj, p + j0, sizeof(Row));
        for (int r = 0; r < R; ++r) acc[r] += p[i0 + r] * pj;
      }
      for (int r = 0; r < R; ++r) std::memcpy(H + (i0 + r) * K + j0, &acc[r], sizeof(Row));
    } else {
      for (int64_t r = 0; r < ri; ++r)
        for (int64_t c = 0; c < cj; ++c) {
          double h = H[(i0 + r) * K + j0 + c];
          for (int64_t b = 0; b < nb; ++b) h += P[b * K + i0 + r] * P[b * K + j0 + c];
          H[(i0 + r) * K + j0 + c] = h;
        }
    }
  }
}

// Every row tile of H, over threads when the block is large: task t takes row tiles t and n-1-t
// (a short and a long row of the triangle). Rows are disjoint, so the sums do not depend on it.
void add_outer_products(double* H, const double* P, int64_t nb, int64_t K) {
  const int64_t tiles = ceil_div(K, kTileRows);
  if (nb * K * K < kThreadedProducts) {
    for (int64_t t = 0; t < tiles; ++t) add_outer_products_rows(H, P, nb, K, t * kTileRows);
    return;
  }
  parallel_for(ceil_div(tiles, 2), default_threads(), [&](int64_t t) {
    add_outer_products_rows(H, P, nb, K, t * kTileRows);
    if (tiles - 1 - t != t) add_outer_products_rows(H, P, nb, K, (tiles - 1 - t) * kTileRows);
  });
}

struct Target {
  QOp* op = nullptr;
  std::string input;   // the float tensor the layer reads
  const Tensor* w = nullptr;  // its float weights (original initializer)
  bool conv = false;
  int64_t N = 0, K = 0, groups = 1, Kg = 0;
  std::vector<double> H;  // [groups][Kg][Kg], upper triangle while accumulating
  int64_t patches = 0;

  // One patch of the layer's input (for group g) into H: H += p p^T. In a layer of one group,
  // patches wait in blocks of kBlock and each tile of H takes a block's updates in registers (H of
  // a 480-wide row is 1.8 MB; a pass over it per patch was most of the time); each entry still adds
  // the patches' products in patch order, so the sums are the same.
  static constexpr int64_t kBlock = 64;
  std::vector<double> pending;  // [patches][Kg], group 0

  void add_patch(int64_t g, const double* p) {
    if (groups > 1) return add_outer_products(H.data() + g * Kg * Kg, p, 1, Kg);  // (small rows: H is in cache)
    pending.insert(pending.end(), p, p + Kg);
    if (static_cast<int64_t>(pending.size()) >= kBlock * Kg) flush();
  }

  void flush() {
    add_outer_products(H.data(), pending.data(), static_cast<int64_t>(pending.size()) / std::max<int64_t>(Kg, 1), Kg);
    pending.clear();
  }

  void observe(const Tensor& x, size_t samples) {
    if (x.dtype() != DType::Float32) return;
    const float* xs = x.data<float>();
    std::vector<double> p(static_cast<size_t>(Kg));
    int64_t want = (wanted_patches(Kg) + static_cast<int64_t>(samples) - 1) / static_cast<int64_t>(samples);
    if (!conv) {  // rows of the last axis
      if (x.rank() < 1 || x.shape().back() != K) return;
      int64_t rows = x.numel() / K, take = std::min(rows, want);
      for (int64_t t = 0; t < take; ++t) {
        int64_t r = t * rows / take;
        for (int64_t k = 0; k < K; ++k) p[k] = std::isfinite(xs[r * K + k]) ? xs[r * K + k] : 0.0;
        add_patch(0, p.data());
      }
      flush();
      patches += take;
      return;
    }
    const Node& n = op->node;
    ref::ConvGeometry geo = ref::conv_geometry(n, x.shape(), w->shape());
    const ref::Window& w3 = geo.w3;
    int64_t total = geo.N * geo.out_plane, take = std::min(total, want);
    for (int64_t t = 0; t < take; ++t) {
      int64_t pos = t * total / take, b = pos / geo.out_plane, o = pos % geo.out_plane;
      int64_t od = o / (w3.out[1] * w3.out[2]), oh = (o / w3.out[2]) % w3.out[1], ow = o % w3.out[2];
      for (int64_t g = 0; g < geo.group; ++g) {
        for (int64_t ci = 0; ci < geo.cg; ++ci) {
          const float* plane = xs + (b * geo.C + g * geo.cg + ci) * geo.in_plane;
          int64_t k = 0;
          for (int64_t kd = 0; kd < w3.kernel[0]; ++kd)
            for (int64_t kh = 0; kh < w3.kernel[1]; ++kh)
              for (int64_t kw = 0; kw < w3.kernel[2]; ++kw, ++k) {
                int64_t id = od * w3.stride[0] - w3.pad_begin[0] + kd * w3.dilation[0];
                int64_t ih = oh * w3.stride[1] - w3.pad_begin[1] + kh * w3.dilation[1];
                int64_t iw = ow * w3.stride[2] - w3.pad_begin[2] + kw * w3.dilation[2];
                bool inside = id >= 0 && id < w3.in[0] && ih >= 0 && ih < w3.in[1] && iw >= 0 && iw < w3.in[2];
                double v = inside ? plane[(id * w3.in[1] + ih) * w3.in[2] + iw] : 0.0;
                p[static_cast<size_t>(ci * geo.ks + k)] = std::isfinite(v) ? v : 0.0;
              }
        }
        add_patch(g, p.data());
      }
    }
    flush();
    patches += take;
  }
};

// Greedy coordinate descent on E(q) = d^T H d, d = q s - w, each q_k in {floor, ceil}(w_k / s):
// flip a code to the other side of w_k when that lowers E; sweep until no flip helps. Returns
// (E at nearest rounding, E after, codes flipped).
struct ChannelResult {
  double before = 0, after = 0;
  int64_t flipped = 0;
};
// One channel's codes q (K of them, starting at the nearest), its float weights w and scale s.
struct Channel {
  const double* w = nullptr;
  double s = 0;
  int64_t* q = nullptr;
  std::vector<double> d, g;  // d = q s - w; g = H d
};

// g = H d for a block of channels that share H: each row of H is read once for the whole block
// (H of a 4,608-wide row is 170 MB; read once per channel, the pass was ResNet-18's whole
// compile). Each g[j] still adds H[i][j] d[i] in the order of i, so the sums are those of one
// channel at a time.
void gradients(const double* H, int64_t K, std::vector<Channel>& block) {
  for (Channel& c : block) {
    c.d.resize(static_cast<size_t>(K));
    c.g.assign(static_cast<size_t>(K), 0.0);
    for (int64_t k = 0; k < K; ++k) c.d[k] = static_cast<double>(c.q[k]) * c.s - c.w[k];
  }
  for (int64_t i = 0; i < K; ++i) {
    const double* hi = H + i * K;
    for (Channel& c : block) {
      if (c.d[i] != 0) add_scaled(c.g.data(), hi, c.d[i], K);
    }
  }
}

ChannelResult descend(const double* H, int64_t K, fx::Range r, Channel& c) {
  std::vector<double>&d = c.d, &g = c.g;
  int64_t* q = c.q;
  ChannelResult res;
  for (int64_t k = 0; k < K; ++k) res.before += d[k] * g[k];
  double E = res.before;
  std::vector<int64_t> start(q, q + K);
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool moved = false;
    for (int64_t k = 0; k < K; ++k) {
      double hkk = H[k * K + k];
      if (hkk <= 0) continue;  // an input this row never sees: keep the nearest code
      int64_t alt = d[k] > 0 ? q[k] - 1 : q[k] + 1;  // the code on the other side of w_k
      if (alt < r.lo || alt > r.hi) continue;
      double delta = static_cast<double>(alt - q[k]) * c.s;
      double dE = 2 * delta * g[k] + delta * delta * hkk;
      if (!(dE < -1e-12 * std::max(E, 1e-300))) continue;
      add_scaled(g.data(), H + k * K, delta, K);
      d[k] += delta;
      q[k] = alt;
      E += dE;
      moved = true;
    }
    if (!moved) break;
  }
  res.after = std::max(E, 0.0);
  for (int64_t k = 0; k < K; ++k) res.flipped += q[k] != start[k];
  return res;
}

}  // namespace

void round_weights_adaptively(CompileContext& cx, const CalibrationSource& calib) {
  std::vector<Target> targets, ready;  // ready: H kept from an earlier compile of the job
  int64_t too_long = 0, layers = 0, flipped = 0, codes = 0;
  double db_sum = 0;
  nlohmann::json per_layer = nlohmann::json::array();
  auto record = [&](const nlohmann::json& l) {
    ++layers;
    flipped += l["codes_changed"].get<int64_t>();
    codes += l["codes"].get<int64_t>();
    db_sum += l["weight_error_reduction_db"].get<double>();
    per_layer.push_back(l);
  };
  CalibrationCache* cache = cx.opts.calibration_cache.get();
  for (QOp& op : cx.prog.ops) {
    if (!op.is<params::Conv>() && !op.is<params::MatMul>()) continue;
    params::Weighted& pw = *weighted_params(op.params);
    auto ow = cx.original_weight.find(op.node.name);
    if (pw.weight.dtype() != DType::Int8 || ow == cx.original_weight.end() || cx.qdq.weights.count(ow->second)) continue;
    Target t;
    t.op = &op;
    t.input = op.node.inputs[0];
    t.w = &cx.g.initializers.at(ow->second);
    t.conv = op.is<params::Conv>();
    t.N = pw.weight.dim(0);
    t.K = pw.weight.numel() / t.N;
    t.groups = t.conv ? op.node.attr_int("group", 1) : 1;
    t.Kg = t.K;  // a Conv's row is one group's patch (C/g x kernel)
    if (t.Kg > kMaxRow) {
      ++too_long;
      continue;
    }
    if (cache) {  // rounded by an earlier compile of this job
      auto it = cache->rounded.find(op.node.name);
      if (it != cache->rounded.end() && it->second.codes.shape() == pw.weight.shape() &&
          it->second.weight_scale.numel() == pw.weight_scale.numel()) {
        if (std::equal(pw.weight_scale.data<double>(), pw.weight_scale.data<double>() + pw.weight_scale.numel(),
                       it->second.weight_scale.data<double>())) {  // with the same weight scales
          pw.weight = it->second.codes;
          if (!it->second.report.is_null()) record(it->second.report);
          continue;
        }
        if (it->second.H) {  // other scales, the same samples: round again from its H
          t.H = *it->second.H;
          t.patches = it->second.patches;
          ready.push_back(std::move(t));
          continue;
        }
      }
    }
    targets.push_back(std::move(t));
  }
  // Round t's codes against its H (accumulated, or kept), and keep the result in the job's cache.
  auto round_target = [&](Target& t) {
    if (t.patches == 0) {  // no sample reached its input: nearest codes (kept, so later compiles do not look again)
      params::Weighted& pw = *weighted_params(t.op->params);
      if (cache) cache->rounded[t.op->node.name] = {pw.weight_scale, pw.weight, nullptr, nullptr, 0};
      return;
    }
    for (int64_t g = 0; g < t.groups; ++g) {  // the lower triangle from the upper
      double* h = t.H.data() + g * t.Kg * t.Kg;
      for (int64_t a = 0; a < t.Kg; ++a)
        for (int64_t b = a + 1; b < t.Kg; ++b) h[b * t.Kg + a] = h[a * t.Kg + b];
    }
    params::Weighted& pw = *weighted_params(t.op->params);
    Tensor qw = pw.weight.clone();  // its own codes (tensors share storage on copy)
    const double* ws = pw.weight_scale.data<double>();
    int64_t mg = t.N / t.groups;
    fx::Range r = fx::range_of(DType::Int8);
    r.lo = -r.hi;  // weight codes stay symmetric (the nearest codes of (10) never reach -128)
    std::vector<ChannelResult> res(static_cast<size_t>(t.N));
    // Tasks: blocks of up to kBlockChannels channels of one group (they share its H).
    const int64_t per_group = ceil_div(mg, kBlockChannels);
    parallel_for(t.groups * per_group, default_threads(), [&](int64_t task) {
      const int64_t g = task / per_group, c0 = g * mg + task % per_group * kBlockChannels;
      const int64_t c1 = std::min(c0 + kBlockChannels, (g + 1) * mg);
      const double* H = t.H.data() + g * t.Kg * t.Kg;
      std::vector<double> w(static_cast<size_t>((c1 - c0) * t.K));
      std::vector<int64_t> q(static_cast<size_t>((c1 - c0) * t.K));
      std::vector<Channel> block;
      std::vector<int64_t> index;
      for (int64_t c = c0; c < c1; ++c) {
        double* wc = w.data() + (c - c0) * t.K;
        int64_t* qc = q.data() + (c - c0) * t.K;
        for (int64_t k = 0; k < t.K; ++k) {
          wc[k] = float_weight(*t.op, *t.w, c, k, t.N, t.K);
          qc[k] = static_cast<int64_t>(qw.get_f64(c * t.K + k));
        }
        if (!(ws[c] > 0) || !std::isfinite(ws[c])) continue;  // (nearest codes kept)
        block.push_back({wc, ws[c], qc, {}, {}});
        index.push_back(c);
      }
      gradients(H, t.K, block);
      for (size_t i = 0; i < block.size(); ++i) {
        const int64_t c = index[i];
        res[c] = descend(H, t.K, r, block[i]);
        for (int64_t k = 0; k < t.K; ++k) qw.set_f64(c * t.K + k, static_cast<double>(block[i].q[k]));
      }
    });
    double before = 0, after = 0;
    int64_t f = 0;
    for (const auto& c : res) before += c.before, after += c.after, f += c.flipped;
    pw.weight = qw;
    std::shared_ptr<const std::vector<double>> kept;
    if (cache && static_cast<int64_t>(t.H.size()) <= kKeepDoubles)
      kept = std::make_shared<const std::vector<double>>(std::move(t.H));
    t.H = {};
    double db = before > 0 && after > 0 ? 10 * std::log10(before / after) : 0.0;
    nlohmann::json l = {{"layer", t.op->node.name}, {"codes_changed", f}, {"codes", qw.numel()},
                        {"patches", t.patches}, {"row", t.Kg}, {"weight_error_reduction_db", db}};
    record(l);
    if (cache) cache->rounded[t.op->node.name] = {pw.weight_scale, qw, l, kept, t.patches};
  };
  size_t samples = std::min(calib.size(), kMaxSamples);
  for (Target& t : ready) round_target(t);
  std::unique_ptr<Executor> ex;  // only when some layer is not rounded yet
  if (!targets.empty()) ex = std::make_unique<Executor>(cx.g, fast_float_kernels());
  for (size_t first = 0; first < targets.size();) {
    // A chunk of layers whose H fit the memory bound, accumulated in one pass over the samples.
    size_t last = first;
    int64_t entries = 0;
    while (last < targets.size() && (last == first || entries + targets[last].groups * targets[last].Kg * targets[last].Kg <= kChunkDoubles))
      entries += targets[last].groups * targets[last].Kg * targets[last].Kg, ++last;
    std::map<std::string, std::vector<Target*>> by_input;
    for (size_t i = first; i < last; ++i) {
      targets[i].H.assign(static_cast<size_t>(targets[i].groups * targets[i].Kg * targets[i].Kg), 0.0);
      by_input[targets[i].input].push_back(&targets[i]);
    }
    auto observe = [&](const std::string& name, const Tensor& v) {
      auto it = by_input.find(name);
      if (it == by_input.end()) return;
      for (Target* t : it->second) t->observe(v, samples);
    };
    RunOptions ro;
    ro.threads = default_threads();
    ro.on_node = [&](const Node& n, const std::vector<Tensor>& outs) {
      for (size_t i = 0; i < outs.size(); ++i)
        if (!n.outputs[i].empty()) observe(n.outputs[i], outs[i]);
    };
    for (size_t s = 0; s < samples; ++s) {
      auto sample = with_batch_dim(calib.sample(s), cx.model_inputs);
      for (const auto& [name, t] : sample) observe(name, t);
      ex->run(sample, ro);
    }
    for (size_t i = first; i < last; ++i) round_target(targets[i]);
    first = last;
  }
  cx.log_rewrite("adaptive_rounding",
                 cat("rounded the weights of ", layers, " layer(s) by their output error on ", samples,
                     " calibration sample(s): ", flipped, " of ", codes, " codes moved off the nearest, weight-rounding "
                     "error at the layer outputs ", layers ? db_sum / static_cast<double>(layers) : 0.0,
                     " dB lower on average", too_long ? cat("; ", too_long, " layer(s) with rows over ", kMaxRow,
                                                              " weights kept nearest rounding") : ""),
                 nlohmann::json::array());
  cx.adaptive_rounding = {{"samples", samples}, {"layers", per_layer}};
}

}  // namespace fixpoint
