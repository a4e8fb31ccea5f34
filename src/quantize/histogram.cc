#include "histogram.h"

#include <cmath>
#include <numeric>

namespace fixpoint {

void AbsHistogram::add(const Tensor& t) {
  if (!dtype_is_float(t.dtype())) return;
  const float* p = t.dtype() == DType::Float32 ? t.data<float>() : nullptr;
  double inv = kBins / max_;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = std::abs(p ? p[i] : t.get_f64(i));
    if (!std::isfinite(v)) continue;
    int b = static_cast<int>(v * inv);
    counts_[std::min(b, kBins - 1)] += 1.0;
  }
}

double AbsHistogram::total() const { return std::accumulate(counts_.begin(), counts_.end(), 0.0); }

double AbsHistogram::threshold(const std::string& method, int64_t levels) const {
  double n = total(), width = max_ / kBins;
  if (n == 0) return max_;
  if (method == "percentile") {
    double want = 0.9999 * n, acc = 0;
    for (int b = 0; b < kBins; ++b) {
      acc += counts_[b];
      if (acc >= want) return (b + 1) * width;
    }
    return max_;
  }
  if (method == "mse") {
    double best = max_, best_err = INFINITY;
    for (int t = kBins / 64; t <= kBins; t += kBins / 256) {
      double T = t * width, step = T / static_cast<double>(levels), err = 0;
      for (int b = 0; b < kBins; ++b) {
        double c = (b + 0.5) * width;
        err += counts_[b] * (c > T ? (c - T) * (c - T) : step * step / 12.0);
      }
      if (err < best_err) {
        best_err = err;
        best = T;
      }
    }
    return best;
  }
  if (method == "entropy") {
    // TensorRT-style KL calibration over candidate thresholds of at least `q` bins.
    int q = static_cast<int>(std::min<int64_t>(levels + 1, 128));
    double best = max_, best_kl = INFINITY;
    // The spike of exact zeros (after Relu, padding) is removed first, as NVIDIA's
    // pytorch-quantization does (bins[0] = bins[1]): otherwise it dominates KL, which then
    // prefers thresholds so small that the spike sits alone in its group (clipping hard).
    std::vector<double> counts = counts_;
    counts[0] = counts[1];
    for (int i = q; i <= kBins; i += std::max(1, kBins / 512)) {
      std::vector<double> p(counts.begin(), counts.begin() + i);
      for (int b = i; b < kBins; ++b) p[i - 1] += counts[b];  // outliers into the last bin
      // Q: the *unclipped* bins [0, i) merged into q groups and spread back over the group's
      // non-empty bins; P has the outliers folded into its last bin, so clipping costs KL.
      std::vector<double> qd(i, 0.0);
      for (int g = 0; g < q; ++g) {
        int lo = g * i / q, hi = (g + 1) * i / q;
        double sum = 0;
        int nz = 0;
        for (int b = lo; b < hi; ++b) {
          sum += counts[b];
          nz += counts[b] > 0;
        }
        for (int b = lo; b < hi; ++b)
          if (counts[b] > 0) qd[b] = sum / nz;
      }
      double ps = std::accumulate(p.begin(), p.end(), 0.0), qs = std::accumulate(qd.begin(), qd.end(), 0.0), kl = 0;
      for (int b = 0; b < i; ++b)
        if (p[b] > 0) kl += p[b] / ps * std::log((p[b] / ps) / std::max(qd[b] / qs, 1e-12));
      if (kl < best_kl) {
        best_kl = kl;
        best = (i + 0.5) * width;
      }
    }
    return std::min(best, max_);
  }
  fail("--calib-method '", method, "' is unknown (minmax, percentile, entropy, mse)");
}

}  // namespace fixpoint
