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

AbsHistogram AbsHistogram::from_counts(double max_abs, std::vector<double> counts) {
  FP_CHECK(counts.size() == static_cast<size_t>(kBins) && max_abs > 0 && std::isfinite(max_abs),
           "calibration histogram: expected ", kBins, " bins over a positive range");
  AbsHistogram h(max_abs);
  h.counts_ = std::move(counts);
  return h;
}

void AbsHistogram::merge(const AbsHistogram& other, const std::string& tensor) {
  FP_CHECK(other.max_ == max_, "tensor '", tensor, "': histograms over different ranges (", max_, " and ", other.max_,
           ") cannot be merged exactly: measure every part's histograms on the merged ranges");
  for (int b = 0; b < kBins; ++b) counts_[b] += other.counts_[b];
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
  fail("--calib-method '", method, "' is unknown (percentile, minmax, mse)");
}

}  // namespace fixpoint
