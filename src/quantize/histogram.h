// Range estimation from a streamed histogram of |x| (calibration methods other than minmax).
#pragma once
#include <string>
#include <vector>

#include "fixpoint/tensor.h"

namespace fixpoint {

class AbsHistogram {
 public:
  static constexpr int kBins = 2048;
  explicit AbsHistogram(double max_abs) : max_(max_abs > 0 ? max_abs : 1.0), counts_(kBins, 0.0) {}
  void add(const Tensor& t);
  // Clipping threshold T (the quantization range is [-T, T] or [0, T]) for `levels` positive
  // quantization levels (127 or 255 for 8-bit, 32767 or 65535 for 16-bit).
  //   percentile: the `percentile`th percentile of |x| (in (50, 100])
  //   mse:        minimizes the expected squared error (clipping + rounding noise T^2/(12 levels^2))
  double threshold(const std::string& method, int64_t levels, double percentile) const;

  // Mergeable statistics: histograms over the same range add bin by bin (integer counts held
  // exactly in doubles below 2^53: any order gives the same sums).
  double max_abs() const { return max_; }
  const std::vector<double>& counts() const { return counts_; }
  static AbsHistogram from_counts(double max_abs, std::vector<double> counts);
  void merge(const AbsHistogram& other, const std::string& tensor);

 private:
  double max_;
  std::vector<double> counts_;
  double total() const;
};

}  // namespace fixpoint
