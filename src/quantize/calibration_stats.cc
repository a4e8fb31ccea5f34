// Calibration statistics (docs/arithmetic.md §2.2): the float model runs over the samples;
// every tensor's min/max (and, for percentile and mse, a histogram of |x|) is recorded.
#include "quantize/calibration_stats.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <utility>

#include "fixpoint/float_kernels.h"
#include "fixpoint/parallel.h"
#include "fixpoint/runtime.h"
#include "quantize/channel_equalization.h"
#include "quantize/compile_context.h"
#include "quantize/fnv_hash.h"

namespace fixpoint {
namespace {

// Min and max of the finite values of p[0, n) in float (exact: converting to double keeps the
// order), in a loop the compiler vectorizes (minps/maxps on masked values); lo > hi when none is.
std::pair<float, float> finite_range(const float* p, int64_t n) {
  const float inf = std::numeric_limits<float>::infinity();
  float flo = inf, fhi = -inf;
  for (int64_t i = 0; i < n; ++i) {
    float v = p[i];
    bool finite = std::fabs(v) < inf;  // false for NaN and +-Inf
    float a = finite ? v : inf, b = finite ? v : -inf;
    flo = a < flo ? a : flo;
    fhi = b > fhi ? b : fhi;
  }
  return {flo, fhi};
}

}  // namespace

void Stats::add(const Tensor& t, bool track_grid) {
  if (!dtype_is_float(t.dtype())) return;
  if (track_grid && !grid_tracked) {
    grid_tracked = true;
    on_grid.fill(true);
  }
  const float* p = t.dtype() == DType::Float32 ? t.data<float>() : nullptr;
  if (p && !track_grid) {  // float32 activations (§2.8: non-finite values skipped)
    auto [flo, fhi] = finite_range(p, t.numel());
    if (flo <= fhi) {  // some value was finite
      lo = std::min(lo, static_cast<double>(flo));
      hi = std::max(hi, static_cast<double>(fhi));
    }
    return;
  }
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = p ? p[i] : t.get_f64(i);
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    for (size_t g = 0; track_grid && g < kInputGrids.size(); ++g)
      on_grid[g] = on_grid[g] && std::abs(v / kInputGrids[g] - std::round(v / kInputGrids[g])) < 1e-3;
  }
}

void ChannelSums::add(const Tensor& t) {
  if (!dtype_is_float(t.dtype()) || t.rank() == 0 || t.numel() == 0) return;
  int64_t a = axis < 0 ? t.rank() + axis : axis;
  if (a < 0 || a >= t.rank()) return;
  int64_t C = t.dim(a), inner = 1;
  for (int64_t d = a + 1; d < t.rank(); ++d) inner *= t.dim(d);
  if (sum.empty()) sum.assign(static_cast<size_t>(C), 0.0), count.assign(static_cast<size_t>(C), 0.0);
  if (static_cast<int64_t>(sum.size()) != C || C == 0) return;  // another shape: not an input channel axis
  const float* p = t.dtype() == DType::Float32 ? t.data<float>() : nullptr;
  for (int64_t i = 0, outer = t.numel() / (C * inner); i < outer; ++i)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t j = (i * C + c) * inner, end = j + inner; j < end; ++j) {
        double v = p ? p[j] : t.get_f64(j);
        if (!std::isfinite(v)) continue;  // §2.8: ranges ignore non-finite values, and so do means
        sum[static_cast<size_t>(c)] += v;
        count[static_cast<size_t>(c)] += 1;
      }
}

void ChannelRanges::add(const Tensor& t) {
  if (t.dtype() != DType::Float32 || t.rank() < 2 || t.numel() == 0) return;
  int64_t C = t.dim(1), inner = t.numel() / (t.dim(0) * C);
  if (lo.empty()) lo.assign(static_cast<size_t>(C), INFINITY), hi.assign(static_cast<size_t>(C), -INFINITY);
  if (static_cast<int64_t>(lo.size()) != C) return;
  const float* p = t.data<float>();
  for (int64_t b = 0; b < t.dim(0); ++b)
    for (int64_t c = 0; c < C; ++c) {
      auto [l, h] = finite_range(p + (b * C + c) * inner, inner);  // (none finite: +inf, -inf, no change)
      lo[static_cast<size_t>(c)] = std::min(lo[static_cast<size_t>(c)], static_cast<double>(l));
      hi[static_cast<size_t>(c)] = std::max(hi[static_cast<size_t>(c)], static_cast<double>(h));
    }
}

void ChannelRanges::merge(const ChannelRanges& o, const std::string& tensor) {
  if (o.lo.empty()) return;
  if (lo.empty()) {
    *this = o;
    return;
  }
  FP_CHECK(lo.size() == o.lo.size(), "calibration statistics: tensor '", tensor, "' has ", lo.size(), " channels in one part and ",
           o.lo.size(), " in another");
  for (size_t c = 0; c < lo.size(); ++c) lo[c] = std::min(lo[c], o.lo[c]), hi[c] = std::max(hi[c], o.hi[c]);
}

std::optional<int> channel_axis(const Node& n) {
  if (n.op_type == "Conv") return 1;
  if (n.op_type == "MatMul") return -1;
  if (n.op_type == "Gemm") return n.attr_int("transA", 0) ? 0 : 1;
  return std::nullopt;
}

std::shared_ptr<CalibrationCache> make_calibration_cache() { return std::make_shared<CalibrationCache>(); }

// Sample i with the batch dim restored for inputs given without it.
std::map<std::string, Tensor> calibration_sample(const CompileContext& cx, const CalibrationSource& calib, size_t i) {
  return with_batch_dim(calib.sample(i), cx.model_inputs);
}

// Pass 1: min/max of every tensor. Pass 2 (methods other than minmax): histograms of |x| over
// [0, max|x|]. Both stream over the samples; memory is per tensor, not per sample.
void calibrate(CompileContext& cx, const CalibrationSource& calib, CalibrationPart part) {
  bool hist = part == CalibrationPart::kHistograms || (part == CalibrationPart::kAll && cx.opts.calib_method != "minmax");
  bool equalize = equalization_applies(cx);
  int first = part == CalibrationPart::kHistograms ? 1 : 0;
  int last = hist ? 1 : 0;
  if (first == 0) {
    for (const auto& n : cx.g.nodes)
      if (auto a = channel_axis(n); a && !n.inputs.empty()) {
        auto [it, fresh] = cx.channels.try_emplace(n.inputs[0]);
        if (fresh) it->second.axis = *a;  // the first reader's axis; bias correction checks each reader's
      }
    if (equalize)
      for (const auto& t : equalization_tensors(cx.g)) cx.channel_ranges.try_emplace(t);
  }
  auto ex = std::make_unique<Executor>(cx.g, fast_float_kernels());
  for (int pass = first; pass <= last; ++pass) {
    // The histograms measure the graph the program computes: equalized (from the first pass's
    // per-channel ranges, or a ranges round's merged ones) before they start.
    if (pass == 1 && equalize && !cx.channels_equalized) {
      equalize_channels(cx);
      ex = std::make_unique<Executor>(cx.g, fast_float_kernels());  // (the rewritten weights)
    }
    // Non-finite values are counted in the first pass that runs (each sample once).
    bool count = pass == first;
    auto observe = [&cx, pass](const std::string& t, const Tensor& v) {
      if (pass == 0) {
        cx.stats[t].add(v, cx.is_graph_input(t));
        if (auto c = cx.channels.find(t); c != cx.channels.end()) c->second.add(v);
        if (auto c = cx.channel_ranges.find(t); c != cx.channel_ranges.end()) c->second.add(v);
        return;
      }
      auto it = cx.hist.find(t);
      if (it == cx.hist.end()) it = cx.hist.emplace(t, AbsHistogram(cx.stats[t].absmax())).first;
      it->second.add(v);
    };
    RunOptions ro;
    ro.threads = default_threads();
    ro.on_node = [&](const Node& n, const std::vector<Tensor>& outs) {
      for (size_t i = 0; i < outs.size(); ++i) {
        if (n.outputs[i].empty()) continue;
        observe(n.outputs[i], outs[i]);
        if (count) cx.calib_nonfinite.tensors += count_nonfinite(outs[i]);
      }
    };
    for (size_t i = 0; i < calib.size(); ++i) {
      auto sample = calibration_sample(cx, calib, i);
      for (const auto& [name, t] : sample) {
        observe(name, t);
        if (count) cx.calib_nonfinite.inputs += count_nonfinite(t);
      }
      ex->run(sample, ro);
      if (cx.opts.progress && (i + 1 == calib.size() || (i + 1) % 10 == 0))
        cx.opts.progress(cat("calibration", first != last ? cat(" pass ", pass + 1, "/2") : "", ": ", i + 1, "/",
                           calib.size(), " samples"));
    }
  }
  if (part == CalibrationPart::kAll && equalize) equalize_channels(cx);  // (minmax: no histogram pass)
}

void merge_calibration(CalibrationCache& a, const CalibrationCache& b) {
  FP_CHECK(a.fingerprint == b.fingerprint,
           "calibration statistics of different graphs cannot be merged (made from other models or other options)");
  FP_CHECK(a.histograms == b.histograms,
           "calibration statistics with and without histograms cannot be merged: merge the ranges of every part first, "
           "then measure every part's histograms on the merged ranges");
  FP_CHECK(a.equalized == b.equalized, "calibration statistics of a whole calibration or a histogram round cannot be "
           "merged with those of a ranges round (their channels are equalized and these are not)");
  bool same_ranges = a.channel_ranges.size() == b.channel_ranges.size() &&
                     std::equal(a.channel_ranges.begin(), a.channel_ranges.end(), b.channel_ranges.begin(),
                                [](const auto& x, const auto& y) {
                                  return x.first == y.first && x.second.lo == y.second.lo && x.second.hi == y.second.hi;
                                });
  FP_CHECK(!a.equalized || a.channel_ranges.empty() || same_ranges,
           "calibration statistics: these parts equalized their channels by different ranges, so their ranges are in "
           "different units: calibrate in two rounds (ranges, merged; then histograms on the merged ranges)");
  for (const auto& [t, s] : b.stats) {
    auto [it, fresh] = a.stats.emplace(t, s);
    if (fresh) continue;
    Stats& m = it->second;
    m.lo = std::min(m.lo, s.lo);
    m.hi = std::max(m.hi, s.hi);
    if (s.grid_tracked) {
      if (!m.grid_tracked) m.on_grid = s.on_grid;
      else
        for (size_t g = 0; g < m.on_grid.size(); ++g) m.on_grid[g] = m.on_grid[g] && s.on_grid[g];
      m.grid_tracked = true;
    }
  }
  // Sums add, except identical copies: the second-round parts of a sharded calibration each carry
  // the merged first-round sums, and keeping one copy keeps the one-pass means bit for bit
  // (adding copies would give the same means up to rounding). Identical sums of two different
  // parts have the same mean either way.
  for (const auto& [t, c] : b.channels) {
    auto [it, fresh] = a.channels.emplace(t, c);
    if (fresh) continue;
    ChannelSums& m = it->second;
    if (m.axis != c.axis || m.sum.size() != c.sum.size() || (m.count == c.count && m.sum == c.sum)) continue;
    for (size_t i = 0; i < m.sum.size(); ++i) m.sum[i] += c.sum[i], m.count[i] += c.count[i];
  }
  for (const auto& [t, r] : b.channel_ranges) a.channel_ranges[t].merge(r, t);
  for (const auto& [t, h] : b.hist) {
    auto [it, fresh] = a.hist.emplace(t, h);
    if (!fresh) it->second.merge(h, t);
  }
  a.samples += b.samples;
  a.input_nonfinite += b.input_nonfinite;
  a.tensor_nonfinite += b.tensor_nonfinite;
}

std::shared_ptr<CalibrationCache> merged_calibration(const CalibrationCache& a, const CalibrationCache& b) {
  auto r = std::make_shared<CalibrationCache>(a);
  merge_calibration(*r, b);
  return r;
}

size_t calibration_samples(const CalibrationCache& c) { return c.samples; }
bool calibration_has_histograms(const CalibrationCache& c) { return c.histograms; }

bool recall_calibration(CalibrationCache& cache, const std::string& fingerprint) {
  if (!cache.filled || cache.given || cache.fingerprint == fingerprint) return cache.filled;
  auto it = cache.earlier.find(fingerprint);
  if (it == cache.earlier.end()) return false;
  CalibrationCache recalled = *it->second;
  remember_calibration(cache, std::move(recalled));
  return true;
}

void remember_calibration(CalibrationCache& cache, CalibrationCache value) {
  auto earlier = std::move(cache.earlier);
  cache.earlier.clear();
  if (cache.filled && !cache.given) {
    std::string key = cache.fingerprint;  // read before the move below empties it
    earlier[key] = std::make_shared<const CalibrationCache>(std::move(cache));
  }
  value.earlier.clear();
  cache = std::move(value);
  earlier.erase(cache.fingerprint);
  cache.earlier = std::move(earlier);
}

std::string graph_fingerprint(const Graph& g) {
  Fnv1a h;
  auto add = [&h](const std::string& s) { h.add(s + '\x1f'); };
  for (const auto& in : g.inputs) add(in.name + ":" + in.shape_text());
  for (const auto& n : g.nodes) {
    add(n.name);
    add(n.op_type);
    for (const auto& i : n.inputs) add(i);
    for (const auto& o : n.outputs) add(o);
  }
  return h.hex();
}

}  // namespace fixpoint
