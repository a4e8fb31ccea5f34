// Calibration statistics (docs/arithmetic.md §2.2): the float model runs over the samples;
// every tensor's min/max (and, for percentile and mse, a histogram of |x|) is recorded.
#include "quantize/calibration_stats.h"

#include <cmath>

#include "fixpoint/runtime.h"
#include "quantize/compile_context.h"

namespace fixpoint {

void Stats::add(const Tensor& t, bool track_grid) {
  if (!dtype_is_float(t.dtype())) return;
  if (track_grid && !grid_tracked) {
    grid_tracked = true;
    on_grid.fill(true);
  }
  const float* p = t.dtype() == DType::Float32 ? t.data<float>() : nullptr;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = p ? p[i] : t.get_f64(i);
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    for (size_t g = 0; track_grid && g < kInputGrids.size(); ++g)
      on_grid[g] = on_grid[g] && std::abs(v / kInputGrids[g] - std::round(v / kInputGrids[g])) < 1e-3;
  }
}

std::shared_ptr<CalibrationCache> make_calibration_cache() { return std::make_shared<CalibrationCache>(); }

// Sample i with the batch dim restored for inputs given without it.
std::map<std::string, Tensor> calibration_sample(const CompileContext& cx, const CalibrationSource& calib, size_t i) {
  return with_batch_dim(calib.sample(i), cx.model_inputs);
}

// Pass 1: min/max of every tensor. Pass 2 (methods other than minmax): histograms of |x| over
// [0, max|x|]. Both stream over the samples; memory is per tensor, not per sample.
void calibrate(CompileContext& cx, const CalibrationSource& calib) {
  Executor ex(cx.g);
  bool hist = cx.opts.calib_method != "minmax";
  for (int pass = 0; pass < (hist ? 2 : 1); ++pass) {
    auto observe = [&cx, pass](const std::string& t, const Tensor& v) {
      if (pass == 0) {
        cx.stats[t].add(v, cx.is_graph_input(t));
        return;
      }
      auto it = cx.hist.find(t);
      if (it == cx.hist.end()) it = cx.hist.emplace(t, AbsHistogram(cx.stats[t].absmax())).first;
      it->second.add(v);
    };
    RunOptions ro;
    ro.on_node = [&](const Node& n, const std::vector<Tensor>& outs) {
      for (size_t i = 0; i < outs.size(); ++i) {
        if (n.outputs[i].empty()) continue;
        observe(n.outputs[i], outs[i]);
        if (pass == 0) cx.calib_nonfinite.tensors += count_nonfinite(outs[i]);
      }
    };
    for (size_t i = 0; i < calib.size(); ++i) {
      auto sample = calibration_sample(cx, calib, i);
      for (const auto& [name, t] : sample) {
        observe(name, t);
        if (pass == 0) cx.calib_nonfinite.inputs += count_nonfinite(t);
      }
      ex.run(sample, ro);
      if (cx.opts.progress && (i + 1 == calib.size() || (i + 1) % 10 == 0))
        cx.opts.progress(cat("calibration", hist ? cat(" pass ", pass + 1, "/2") : "", ": ", i + 1, "/", calib.size(),
                           " samples"));
    }
  }
}

}  // namespace fixpoint
