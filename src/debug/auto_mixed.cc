#include "fixpoint/auto_mixed.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "fixpoint/compare.h"
#include "fixpoint/error.h"
#include "fixpoint/inspect.h"
#include "fixpoint/model.h"
#include "fixpoint/output_error.h"
#include "fixpoint/parallel.h"

namespace fixpoint {

namespace {

constexpr size_t kMeasured = 24;        // screened candidates measured at the output
constexpr size_t kMeasureSamples = 8;   // calibration samples the output is measured on

}  // namespace

AutoMixedResult choose_mixed_precision(const std::string& model_path, const CompileOptions& opts,
                                       const CalibrationSource& calib, double factor, size_t samples) {
  FP_CHECK(factor >= 1.0, "--auto-mixed ", factor, ": the factor is a cost ratio and must be >= 1");
  FP_CHECK(opts.bits == 8, "--auto-mixed chooses 16-bit layers in an 8-bit program: use --bits 8");
  FP_CHECK(calib.size() > 0, "--auto-mixed needs --calib samples to measure sensitivity");
  auto progress = [&](const std::string& s) {
    if (opts.progress) opts.progress(s);
  };
  CompileOptions o8 = trial_options(opts);
  ModelCompiler model(model_path, opts.shapes);  // read once; passes once per option set; prepared ops reused
  auto compile = [&](int bits, const std::vector<std::string>& extra16, const std::vector<std::string>& extra_out16) {
    CompileOptions c = o8;
    c.bits = bits;
    c.bits16.insert(c.bits16.end(), extra16.begin(), extra16.end());
    c.out16.insert(c.out16.end(), extra_out16.begin(), extra_out16.end());
    return model.compile(c, bits == 32 ? nullptr : &calib).program;
  };

  // 1. Screen: every layer's own/encoding error from a float-vs-fixed comparison (compare.h).
  Comparer cmp(compile(8, {}, {}));
  size_t n = std::min(samples, calib.size());
  for (size_t i = 0; i < n; ++i) {
    cmp.add_sample(with_batch_dim(calib.sample(i), cmp.program().inputs));
    progress(cat("auto-mixed: screened layers on sample ", i + 1, "/", n));
  }
  // Per op: MACs from the float graph bound to the first sample's shapes, else output elements.
  PipelineOptions po;
  for (const auto& [name, t] : with_batch_dim(calib.sample(0), cmp.program().inputs)) po.shapes[name] = t.shape();
  po.shapes_origin = "the first calibration sample";
  ModelStats st = model_stats(load_model(model_path, po));
  std::map<std::string, int64_t> macs;
  for (const auto& l : st.layers) macs[l.name] = l.macs;
  // A candidate is a layer at 16 bits (cost: its own 8-bit cost again) or, where the layer's
  // output encoding is its worse error, only its output stored at 16 bits (cost: every reader's
  // 8-bit cost again, as a 16-bit input doubles a reader's multiply-accumulates).
  struct Cand {
    Cand(std::string n, bool out, double snr, double c) : name(std::move(n)), output_only(out), local_snr(snr), cost8(c) {}
    std::string name;
    bool output_only;
    double local_snr, cost8;  // cost8: what promoting adds
    bool measured = false;
    double noise16 = 0, gain = 0;  // output noise with this candidate alone; all-8 noise minus it
    std::string failed;            // why its program did not compile (then it is never chosen)
  };
  std::vector<Cand> cands;
  std::map<std::string, double> cost8;
  std::vector<const LayerError*> layers;
  for (const auto& e : cmp.layers()) {
    // Data movement follows its input's width: promoting it alone changes nothing.
    if (!e.count || e.kind == "float" || e.kind == "move" || cost8.count(e.name)) continue;
    double c = macs.count(e.name) && macs[e.name] > 0 ? static_cast<double>(macs[e.name])
                                                      : static_cast<double>(e.count) / static_cast<double>(n);
    cost8[e.name] = c;
    layers.push_back(&e);
    cands.emplace_back(e.name, false, e.guilt_snr_db(), c);  // own or encoding error, whichever is worse
  }
  double total8 = 0;
  for (const auto& [name, c] : cost8) total8 += c;
  std::map<std::string, std::vector<std::string>> readers;  // op output tensor -> reading ops
  for (const auto& op : cmp.program().ops)
    for (const auto& in : op.node.inputs) readers[in].push_back(op.node.name);
  for (const LayerError* e : layers) {
    if (!(e->encoding_snr_db() < e->own_snr_db())) continue;
    auto it = readers.find(e->output);
    if (it == readers.end()) continue;
    double c = 0;
    bool known = true;
    for (const auto& r : it->second) {
      known = known && cost8.count(r);
      c += known ? cost8[r] : 0;
    }
    if (known && c > 0) cands.emplace_back(e->name, true, e->encoding_snr_db(), c);
  }
  double budget = factor * total8;
  // Screening: half of the measured candidates by 8-bit noise (relative power 10^(-SNR/10)) per
  // unit of cost they add, so cheap noisy layers (tables, elementwise ops) are measured; half by
  // noise alone, so the large noisy layers a budget can afford are measured too (ranked by noise
  // per cost only, OCR rec filled all 24 places with elementwise ops and spent 1.0001x of 1.25x).
  auto local_noise = [](const Cand& c) { return std::pow(10.0, -c.local_snr / 10.0); };
  auto density = [&](const Cand& c) { return local_noise(c) / std::max(c.cost8, 1.0); };
  std::vector<Cand*> by_density, by_noise;
  for (auto& c : cands)
    if (total8 + c.cost8 <= budget) by_density.push_back(&c);
  by_noise = by_density;
  std::stable_sort(by_density.begin(), by_density.end(), [&](const Cand* a, const Cand* b) { return density(*a) > density(*b); });
  std::stable_sort(by_noise.begin(), by_noise.end(), [&](const Cand* a, const Cand* b) { return local_noise(*a) > local_noise(*b); });
  std::vector<Cand*> screened;
  std::set<const Cand*> taken;
  for (size_t i = 0; screened.size() < kMeasured && i < by_density.size(); ++i)
    for (Cand* c : {by_density[i], by_noise[i]})
      if (screened.size() < kMeasured && taken.insert(c).second) screened.push_back(c);

  // 2. Measure: the graph outputs on calibration samples against the float reference, all at 8
  // bits and with each screened candidate alone at 16 bits (the same calibration statistics).
  OutputSets inputs;
  for (size_t i = 0; i < std::min(kMeasureSamples, calib.size()); ++i) inputs.push_back(calib.sample(i));
  int threads = default_threads();
  OutputSets ref = run_program(compile(32, {}, {}), inputs, threads);
  TrialRuns runs(inputs, threads);  // candidates run from their first op that differs from all-8-bit
  OutputError all8 = output_error(ref, runs.set_base(cmp.program()));
  auto split = [](const std::vector<const Cand*>& cs) {
    std::pair<std::vector<std::string>, std::vector<std::string>> r;  // (bits16, out16)
    for (const Cand* c : cs) (c->output_only ? r.second : r.first).push_back(c->name);
    return r;
  };
  // The graph outputs' noise with a set of candidates promoted (throws when it does not compile).
  auto noise_with = [&](const std::vector<const Cand*>& set) {
    auto [b16, o16] = split(set);
    return output_error(ref, runs.run(compile(8, b16, o16))).noise;
  };
  std::vector<Cand*> measured;
  for (Cand* cp : screened) {
    Cand& c = *cp;
    try {
      c.noise16 = noise_with({&c});
    } catch (const Error& e) {
      c.failed = e.what();  // a combination the compiler rejects is skipped, never fatal
      continue;
    }
    c.gain = all8.noise - c.noise16;
    c.measured = true;
    measured.push_back(&c);
    progress(cat("auto-mixed: ", c.name, c.output_only ? "'s output" : "", " alone at 16 bits: output SNR ",
                 snr_db(all8.signal, c.noise16), " dB (all 8-bit ", all8.snr_db(), " dB)"));
  }

  // 3. Choose by forward selection: candidates in order of measured output-noise reduction per
  // added cost; each that fits the budget joins when the set with it measures better than without
  // (gains of separate layers do not add: a promoted Add changes what its neighbours see).
  std::stable_sort(measured.begin(), measured.end(),
                   [](const Cand* a, const Cand* b) { return a->gain / a->cost8 > b->gain / b->cost8; });
  std::vector<const Cand*> chosen;
  std::map<const Cand*, std::string> decision;
  std::set<std::string> promoted;  // layers with a chosen candidate (a layer or its output)
  double total = total8, predicted_noise = all8.noise, measured_noise = all8.noise;
  for (Cand* c : measured) {
    if (c->gain <= 0) {
      decision[c] = "kept at 8 bits (16 bits did not reduce the output error)";
      continue;
    }
    if (promoted.count(c->name)) {
      decision[c] = "kept (the layer is already promoted)";
      continue;
    }
    if (total + c->cost8 > budget) {
      decision[c] = "kept at 8 bits (over budget)";
      continue;
    }
    double noise = c->noise16;
    if (!chosen.empty()) {
      std::vector<const Cand*> trial = chosen;
      trial.push_back(c);
      try {
        noise = noise_with(trial);
      } catch (const Error& e) {
        decision[c] = std::string("kept at 8 bits (does not compile with the layers chosen before it: ") + e.what() + ")";
        continue;
      }
    }
    if (noise >= measured_noise) {
      decision[c] = cat("kept at 8 bits (with the layers chosen before it: output SNR ", snr_db(all8.signal, noise),
                        " dB, no better than ", snr_db(all8.signal, measured_noise), " dB)");
      continue;
    }
    total += c->cost8;
    predicted_noise -= c->gain;
    measured_noise = noise;
    chosen.push_back(c);
    promoted.insert(c->name);
    decision[c] = c->output_only ? "output at 16 bits" : "16 bits";
  }
  if (!chosen.empty())
    progress(cat("auto-mixed: ", chosen.size(), " promotion(s): output SNR ", all8.snr_db(), " -> ",
                 snr_db(all8.signal, measured_noise), " dB on ", inputs.size(), " calibration sample(s)"));

  AutoMixedResult r;
  std::tie(r.bits16, r.out16) = split(chosen);
  nlohmann::json report_layers = nlohmann::json::array();
  for (const auto& c : cands) {
    nlohmann::json l = {{"name", c.name}, {"promote", c.output_only ? "output" : "layer"}, {"local_snr_db", c.local_snr},
                        {"added_cost", c.cost8}, {"noise_per_cost", density(c)}};
    if (c.measured) l["output_snr_db_alone_at_16"] = snr_db(all8.signal, c.noise16);
    l["decision"] = decision.count(&c)      ? decision[&c]
                    : !c.failed.empty()     ? "kept at 8 bits (does not compile: " + c.failed + ")"
                    : total8 + c.cost8 > budget ? "kept at 8 bits (over budget alone)"
                                                                 : "kept at 8 bits (not among the measured candidates)";
    report_layers.push_back(std::move(l));
  }
  r.report = {{"factor", factor},
              {"cost_model", "MACs for Conv/ConvTranspose/Gemm/MatMul, output elements otherwise; a layer at 16 bits adds its "
                             "cost again, its output alone at 16 bits adds its readers' costs"},
              {"screening", "alternately the largest 10^(-local SNR/10) / cost and 10^(-local SNR/10) among those "
                            "within budget alone, " + std::to_string(kMeasured) + " measured at the output"},
              {"ranking", "measured output noise reduction / cost, largest first; forward selection, each step measured"},
              {"cost_all_8bit", total8}, {"budget", budget}, {"cost_chosen", total}, {"bits16", r.bits16}, {"out16", r.out16},
              {"screening_samples", n}, {"measure_samples", inputs.size()},
              {"output_snr_db", {{"all_8bit", all8.snr_db()},
                                 // gains that add up to all the noise overlap: no additive prediction
                                 {"predicted", predicted_noise > 0 ? nlohmann::json(snr_db(all8.signal, predicted_noise))
                                                                   : nlohmann::json(nullptr)},
                                 {"measured", snr_db(all8.signal, measured_noise)}}},
              {"layers", report_layers}};
  return r;
}

}  // namespace fixpoint
