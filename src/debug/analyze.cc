#include "fixpoint/analyze.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <sys/wait.h>

#include "fixpoint/compare.h"
#include "fixpoint/error.h"
#include "fixpoint/npy.h"
#include "fixpoint/output_error.h"
#include "fixpoint/partition.h"

namespace fixpoint {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
void write_outputs(const OutputSets& outs, const fs::path& dir) {
  for (size_t i = 0; i < outs.size(); ++i) {
    fs::create_directories(dir / std::to_string(i));
    for (const auto& [name, t] : outs[i]) save_npy((dir / std::to_string(i) / (sanitize_name(name) + ".npy")).string(), t);
  }
}

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

// Runs the metric executable on fixed/ and float/ folders; its last stdout line is the number.
double run_metric(const std::string& exe, const fs::path& fixed_dir, const fs::path& float_dir) {
  std::string cmd = shell_quote(exe) + " " + shell_quote(fixed_dir.string()) + " " + shell_quote(float_dir.string());
  FILE* p = popen(cmd.c_str(), "r");
  FP_CHECK(p, "--metric '", exe, "': cannot start it");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  FP_CHECK(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "--metric '", exe, "' failed (exit status ",
           WIFEXITED(status) ? WEXITSTATUS(status) : -1, ") on ", fixed_dir.string());
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ' || out.back() == '\r')) out.pop_back();
  std::string last = out.substr(out.find_last_of('\n') == std::string::npos ? 0 : out.find_last_of('\n') + 1);
  char* end = nullptr;
  double v = std::strtod(last.c_str(), &end);
  FP_CHECK(!last.empty() && end && *end == '\0' && std::isfinite(v), "--metric '", exe,
           "': the last line of its output must be one number, got '", last, "'");
  return v;
}

}  // namespace

json analyze_sensitivity(const std::string& model_path, const CompileOptions& base, const CalibrationSource& calib,
                         const std::vector<std::map<std::string, Tensor>>& inputs, const SensitivityOptions& so) {
  FP_CHECK(!inputs.empty(), "analyze: needs at least one --input set to measure on");
  FP_CHECK(calib.size() > 0, "analyze: needs --calib samples");
  bool snr = so.metric == "snr" && !so.metric_fn, exe = !snr && !so.metric_fn;
  FP_CHECK(!exe || fs::is_regular_file(so.metric), "--metric '", so.metric,
           "': neither 'snr' nor an executable file that prints a score");
  auto progress = [&](const std::string& s) {
    if (base.progress) base.progress(s);
  };
  CompileOptions o = base;
  ModelCompiler model(model_path, base.shapes);  // read once; passes once per option set; prepared ops reused
  o.bits16.clear();
  o.bits8.clear();
  o.calibration_cache = make_calibration_cache();
  bool calibrated = false;  // later compiles reuse the statistics silently
  auto compile = [&](int bits, std::vector<std::string> b16, std::vector<std::string> b8) {
    CompileOptions c = o;
    c.bits = bits;
    c.bits16 = std::move(b16);
    c.bits8 = std::move(b8);
    if (calibrated) c.progress = {};
    calibrated = calibrated || bits != 32;
    return model.compile(c, bits == 32 ? nullptr : &calib).program;
  };
  Program p8 = compile(8, {}, {});
  OutputSets ref = run_program(compile(32, {}, {}), inputs, so.threads);
  fs::path work = so.work_dir.empty() ? fs::temp_directory_path() / "fixpoint_analyze" : fs::path(so.work_dir);
  if (exe) write_outputs(ref, work / "float");
  int evals = 0;
  // Each program differs from the all-8-bit or the all-16-bit one in one layer: it runs from its
  // first op that differs from that program (TrialRuns), on the tensors that program's run kept.
  TrialRuns runs8(inputs, so.threads), runs16(inputs, so.threads);
  auto score_outputs = [&](const OutputSets& got) {
    if (snr) return output_error(ref, got).snr_db();
    if (so.metric_fn) return so.metric_fn(got, ref);
    fs::path dir = work / ("fixed_" + std::to_string(evals++));
    write_outputs(got, dir);
    double v = run_metric(so.metric, dir, work / "float");
    fs::remove_all(dir);
    return v;
  };
  auto score = [&](const Program& p, const TrialRuns& runs) { return score_outputs(runs.run(p)); };
  json r;
  r["metric"] = snr ? "snr_db" : so.metric_fn ? so.metric_name : so.metric;
  if (so.metric_fn) r["float"] = so.metric_fn(ref, ref);
  if (exe) r["float"] = run_metric(so.metric, work / "float", work / "float");
  Program p16 = compile(16, {}, {});
  double all8 = score_outputs(runs8.set_base(p8));
  double all16 = score_outputs(runs16.set_base(p16));
  r["all_8bit"] = all8;
  r["all_16bit"] = all16;
  progress(cat("analyze: all 8-bit ", all8, ", all 16-bit ", all16, snr ? " dB" : ""));

  // Candidates: the fixed-point layers (data movement follows its input's width) of the 8-bit
  // program, measured alone at 16 bits, and of the 16-bit program, measured alone at 8 bits. The
  // two lists differ where a pass runs only at one width (split_concat_conv's parts exist only in
  // the 8-bit program); such a layer has one measure, and null for the other.
  auto layers_of = [&](const Program& p) {
    std::vector<const QOp*> v;
    for (const auto& op : p.ops)
      if (!op.is<params::Float>() && !op.is<params::Move>() && !op.node.name.empty() &&
          (so.layers.empty() || layer_matches_any(so.layers, op.node)))
        v.push_back(&op);
    return v;
  };
  std::vector<const QOp*> in8 = layers_of(p8), in16 = layers_of(p16), cands = in8;
  auto named = [](const std::vector<const QOp*>& v, const std::string& name) {
    return std::any_of(v.begin(), v.end(), [&](const QOp* op) { return op->node.name == name; });
  };
  for (const QOp* op : in16)
    if (!named(in8, op->node.name)) cands.push_back(op);
  FP_CHECK(!cands.empty(), "analyze: no fixed-point layer", so.layers.empty() ? "" : " matches --layers");
  json layers = json::array();
  for (size_t i = 0; i < cands.size(); ++i) {
    const Node& n = cands[i]->node;
    json alone8 = nullptr, alone16 = nullptr, cost8 = nullptr, gain16 = nullptr;
    if (named(in16, n.name)) {
      alone8 = score(compile(16, {}, {n.name}), runs16);
      cost8 = all16 - alone8.get<double>();
    }
    if (named(in8, n.name)) {
      alone16 = score(compile(8, {n.name}, {}), runs8);
      gain16 = alone16.get<double>() - all8;
    }
    layers.push_back({{"name", n.name}, {"op", n.op_type}, {"fused", cands[i]->fused}, {"alone_8bit", alone8},
                      {"alone_16bit", alone16}, {"cost_at_8bit", cost8}, {"gain_at_16bit", gain16}});
    auto shown = [](const json& v) { return v.is_null() ? std::string("-") : cat(v.get<double>()); };
    progress(cat("analyze: layer ", i + 1, "/", cands.size(), " ", n.name, ": alone at 8 bits ", shown(alone8),
                 ", alone at 16 bits ", shown(alone16)));
  }
  auto ranking = [&](const char* key) {
    std::vector<size_t> idx;  // the layers that have this measure
    for (size_t i = 0; i < layers.size(); ++i)
      if (!layers[i][key].is_null()) idx.push_back(i);
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return layers[a][key].get<double>() > layers[b][key].get<double>(); });
    json names = json::array();
    for (size_t i : idx) names.push_back(layers[i]["name"]);
    return names;
  };
  r["layers"] = layers;
  r["rank_by_cost_at_8bit"] = ranking("cost_at_8bit");
  r["rank_by_gain_at_16bit"] = ranking("gain_at_16bit");
  if (exe) fs::remove_all(work);
  return r;
}

std::string sensitivity_table(const json& a, size_t rows) {
  std::ostringstream s;
  bool db = a["metric"] == "snr_db";
  std::string unit = db ? " dB" : "";
  s << std::fixed << std::setprecision(db ? 1 : 4);
  s << "metric: " << a["metric"].get<std::string>() << "   all 8-bit " << a["all_8bit"].get<double>() << unit
    << "   all 16-bit " << a["all_16bit"].get<double>() << unit;
  if (a.contains("float")) s << "   float " << a["float"].get<double>();
  s << "\n\nlayers ranked by what 16 bits for that layer alone gains (the rest at 8 bits):\n";
  s << std::left << std::setw(5) << "rank" << std::setw(40) << "layer" << std::setw(20) << "op" << std::right
    << std::setw(14) << "gain at 16" << std::setw(14) << "cost at 8" << "\n";
  std::map<std::string, json> by_name;
  for (const auto& l : a["layers"]) by_name[l["name"]] = l;
  size_t k = 0;
  for (const auto& name : a["rank_by_gain_at_16bit"]) {
    if (k++ >= rows) break;
    const json& l = by_name[name.get<std::string>()];
    s << std::left << std::setw(5) << k << std::setw(40) << l["name"].get<std::string>().substr(0, 39) << std::setw(20)
      << l["op"].get<std::string>() << std::right << std::setw(14) << l["gain_at_16bit"].get<double>() << std::setw(14);
    if (l["cost_at_8bit"].is_null())
      s << "-";  // no such layer in the 16-bit program
    else
      s << l["cost_at_8bit"].get<double>();
    s << "\n";
  }
  s << "\n(cost at 8 = all-16-bit metric minus the metric with this layer alone at 8 bits; '-': the layer exists "
       "only in the 8-bit program, as split_concat_conv's parts do)\n";
  return s.str();
}

}  // namespace fixpoint
