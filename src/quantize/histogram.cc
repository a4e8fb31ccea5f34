#include "histogram.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "fixpoint/parallel.h"

namespace fixpoint {

void AbsHistogram::add(const Tensor& t) {
  if (!dtype_is_float(t.dtype())) return;
  const float* p = t.dtype() == DType::Float32 ? t.data<float>() : nullptr;
  const double inv = kBins / max_;
  // Chunks counted by the cores into integer bins, added in chunk order: counts are integers
  // (exact in double below 2^53), so the histogram is the same for any thread count.
  constexpr int64_t kChunk = 1 << 16;
  const int64_t n = t.numel(), chunks = (n + kChunk - 1) / kChunk;
  // Four interleaved copies per worker: runs of equal values (ReLU's zeros) would otherwise
  // serialize on one counter.
  // Bin b = min(trunc(|v| * inv), kBins - 1) in double, as one vectorizable loop per block
  // (non-finite values to a discard bin kBins), then the counts.
  constexpr int kWays = 4, kStride = kBins + 1;
  constexpr int64_t kBlock = 1024;
  std::vector<std::vector<int64_t>> bins(static_cast<size_t>(parallel_slots(chunks, default_threads())),
                                         std::vector<int64_t>(kWays * kStride, 0));
  parallel_for_slots(chunks, default_threads(), [&](int64_t c, int slot) {
    int64_t* h = bins[slot].data();
    const double scale = inv, top = kBins - 1;
    int idx[kBlock];
    for (int64_t i0 = c * kChunk; i0 < std::min(n, (c + 1) * kChunk); i0 += kBlock) {
      int m = static_cast<int>(std::min(kBlock, n - i0));
      if (p) {
        const float* q = p + i0;
        for (int i = 0; i < m; ++i) {
          double x = std::fabs(static_cast<double>(q[i])) * scale;
          idx[i] = x <= top ? static_cast<int>(x) : (x > top ? kBins - 1 : kBins);  // x > top incl. +Inf
          if (std::isinf(q[i])) idx[i] = kBins;
        }
      } else {
        for (int i = 0; i < m; ++i) {
          double v = std::abs(t.get_f64(i0 + i));
          idx[i] = !std::isfinite(v) ? kBins : std::min(static_cast<int>(v * scale), kBins - 1);
        }
      }
      for (int i = 0; i < m; ++i) ++h[(i % kWays) * kStride + idx[i]];
    }
  });
  for (const auto& h : bins)
    for (int w = 0; w < kWays; ++w)
      for (int b = 0; b < kBins; ++b) counts_[b] += static_cast<double>(h[w * kStride + b]);
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

double AbsHistogram::threshold(const std::string& method, int64_t levels, double percentile) const {
  double n = total(), width = max_ / kBins;
  if (n == 0) return max_;
  if (method == "percentile") {
    // percentile / 100 rounded to 12 digits and read back: the double nearest the decimal
    // fraction (99.99 -> the literal 0.9999; 99.99 / 100.0 itself is one ulp below it, which moves
    // the threshold when a bin's count reaches the wanted count exactly).
    char digits[32];
    std::snprintf(digits, sizeof digits, "%.12g", percentile / 100.0);
    double want = std::strtod(digits, nullptr) * n, acc = 0;
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
