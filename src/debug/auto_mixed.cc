#include "fixpoint/auto_mixed.h"

#include <algorithm>
#include <cmath>

#include "fixpoint/compare.h"
#include "fixpoint/error.h"
#include "fixpoint/inspect.h"
#include "fixpoint/model.h"

namespace fixpoint {

AutoMixedResult choose_mixed_precision(const std::string& model_path, const CompileOptions& opts,
                                       const CalibrationSource& calib, double factor, size_t samples) {
  FP_CHECK(factor >= 1.0, "--auto-mixed ", factor, ": the factor is a cost ratio and must be >= 1");
  FP_CHECK(opts.bits == 8, "--auto-mixed chooses 16-bit layers in an 8-bit program: use --bits 8");
  FP_CHECK(calib.size() > 0, "--auto-mixed needs --calib samples to measure sensitivity");
  CompileOptions o8 = opts;
  o8.progress = {};
  CompileResult base = compile_model(model_path, o8, &calib);
  Comparer cmp(std::move(base.program));
  size_t n = std::min(samples, calib.size());
  for (size_t i = 0; i < n; ++i) {
    auto s = with_batch_dim(calib.sample(i), cmp.program().inputs);
    cmp.add_sample(s);
    if (opts.progress) opts.progress(cat("auto-mixed: measured sensitivity on sample ", i + 1, "/", n));
  }
  // Per op: MACs from the float graph bound to the first sample's shapes, else output elements.
  PipelineOptions po;
  for (const auto& [name, t] : with_batch_dim(calib.sample(0), cmp.program().inputs)) po.shapes[name] = t.shape();
  po.shapes_origin = "the first calibration sample";
  ModelStats st = model_stats(load_model(model_path, po));
  std::map<std::string, int64_t> macs;
  for (const auto& l : st.layers) macs[l.name] = l.macs;
  struct Cand {
    std::string name;
    double local_snr, cost8;
  };
  std::vector<Cand> cands;
  std::map<std::string, double> cost8;
  for (const auto& e : cmp.layers()) {
    if (!e.count || e.kind == "float" || cost8.count(e.name)) continue;
    double c = macs.count(e.name) && macs[e.name] > 0 ? static_cast<double>(macs[e.name])
                                                      : static_cast<double>(e.count) / static_cast<double>(n);
    cost8[e.name] = c;
    cands.push_back({e.name, e.guilt_snr_db(), c});  // own or encoding error, whichever is worse
  }
  double total8 = 0;
  for (const auto& [name, c] : cost8) total8 += c;
  double budget = factor * total8, total = total8;
  // Greedy by value per cost: a layer's 8-bit noise (relative power 10^(-SNR/10)) per unit of
  // cost it adds at 16 bits. Ranking by SNR alone spent most of a 1.25x budget on one large Conv
  // of PaddleOCR's recognizer; this ranking takes the cheap noisy layers (tables, elementwise ops)
  // first and large layers when they are noisy enough to be worth their MACs.
  auto density = [](const Cand& c) { return std::pow(10.0, -c.local_snr / 10.0) / std::max(c.cost8, 1.0); };
  std::stable_sort(cands.begin(), cands.end(), [&](const Cand& a, const Cand& b) { return density(a) > density(b); });
  AutoMixedResult r;
  nlohmann::json decisions = nlohmann::json::array();
  for (const auto& c : cands) {
    std::string decision;
    if (c.local_snr >= 40.0) decision = "kept at 8 bits (local SNR >= 40 dB)";
    else if (total + c.cost8 > budget) decision = "kept at 8 bits (over budget)";
    else {
      total += c.cost8;  // 16 bits doubles the layer's cost
      r.bits16.push_back(c.name);
      decision = "16 bits";
    }
    decisions.push_back({{"name", c.name}, {"local_snr_db", c.local_snr}, {"cost_8bit", c.cost8},
                         {"noise_per_cost", density(c)}, {"decision", decision}});
  }
  r.report = {{"factor", factor},
              {"cost_model", "MACs for Conv/ConvTranspose/Gemm/MatMul, output elements otherwise; x2 at 16 bits"},
              {"ranking", "10^(-local SNR/10) / cost, largest first"},
              {"cost_all_8bit", total8}, {"budget", budget}, {"cost_chosen", total}, {"bits16", r.bits16},
              {"sensitivity_samples", n}, {"layers", decisions}};
  return r;
}

}  // namespace fixpoint
