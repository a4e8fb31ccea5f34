#include "fixpoint/compile_job.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "fixpoint/artifact.h"
#include "fixpoint/auto_mixed.h"
#include "fixpoint/range_search.h"

namespace fixpoint {
namespace {

// The first `n` samples of another source (TIDL's calibration_frames).
class FirstSamples : public CalibrationSource {
 public:
  FirstSamples(std::unique_ptr<CalibrationSource> s, size_t n) : s_(std::move(s)), n_(std::min(n, s_->size())) {}
  size_t size() const override { return n_; }
  std::map<std::string, Tensor> sample(size_t i) const override { return s_->sample(i); }

 private:
  std::unique_ptr<CalibrationSource> s_;
  size_t n_;
};

std::vector<std::string> json_list(const nlohmann::json& v, const std::string& key, const std::string& origin) {
  std::vector<std::string> r;
  if (v.is_string()) r.push_back(v.get<std::string>());
  else if (v.is_array())
    for (const auto& e : v) {
      FP_CHECK(e.is_string(), origin, ": '", key, "' must be a string or a list of strings");
      r.push_back(e.get<std::string>());
    }
  else fail(origin, ": '", key, "' must be a string or a list of strings");
  return split_list(r);
}

// "shape": {"x": [1, 3, 48, 320]} or ["x=1x3x48x320", ...].
ShapeBindings json_shapes(const nlohmann::json& v, const std::string& origin) {
  if (!v.is_object()) return parse_shape_options(json_list(v, "shape", origin), cat(origin, ": shape"));
  ShapeBindings b;
  for (const auto& [name, dims] : v.items()) {
    FP_CHECK(dims.is_array(), origin, ": shape of '", name, "' must be a list of integers");
    Shape s;
    for (const auto& d : dims) {
      FP_CHECK(d.is_number_integer() && d.get<int64_t>() > 0, origin, ": shape of '", name, "' must be a list of positive integers");
      s.push_back(d.get<int64_t>());
    }
    b[name] = s;
  }
  return b;
}

}  // namespace

std::vector<std::string> split_list(const std::vector<std::string>& v) {
  std::vector<std::string> r;
  for (const auto& s : v) {
    std::string cur;
    for (char c : s + ",") {
      if (c == ',') {
        if (!cur.empty()) r.push_back(cur);
        cur.clear();
      } else if (c != ' ') {
        cur += c;
      }
    }
  }
  return r;
}

ShapeBindings parse_shape_options(const std::vector<std::string>& specs, const std::string& option) {
  ShapeBindings b;
  for (const auto& s : specs) {
    size_t eq = s.rfind('=');
    FP_CHECK(eq != std::string::npos && eq > 0, option, " '", s, "': expected NAME=1x3x224x224");
    b[s.substr(0, eq)] = parse_shape(s.substr(eq + 1), cat(option, " ", s));
  }
  return b;
}

void apply_compile_options(CompileJob& job, const nlohmann::json& obj, const std::string& origin) {
  FP_CHECK(obj.is_object(), origin, ": expected an object of options");
  // How an option is named in errors: as the user wrote it.
  bool cli = origin == kCommandLine;
  auto opt = [&](const std::string& k) {
    if (!cli) return cat(origin, ": '", k, "'");
    std::string f = "--" + k;
    std::replace(f.begin(), f.end(), '_', '-');
    return f;
  };
  CompileOptions& o = job.options;
  bool deny_reset = false;
  auto deny = [&]() -> std::vector<std::string>& {
    if (!deny_reset) o.deny.clear();
    deny_reset = true;
    return o.deny;
  };
  for (const auto& [k, v] : obj.items()) {
    try {
      if (k == "bits" || k == "tensor_bits") {
        o.bits = v.get<int>();
        FP_CHECK(o.bits == 8 || o.bits == 16 || o.bits == 32, opt(k), " must be 8, 16 or 32, not ", o.bits);
      } else if (k == "calib_method") {
        o.calib_method = v.get<std::string>();
      } else if (k == "calib_percentile") {
        o.calib_percentile = v.get<double>();
      } else if (k == "scale_mode") {
        o.scale_mode = v.get<std::string>();
      } else if (k == "quantization_scale_type") {
        int t = v.get<int>();
        FP_CHECK(t == 0 || t == 1, opt(k), ": ", t, " is not supported (0 or 1)");
        o.scale_mode = t == 1 ? "pow2" : "float";
      } else if (k == "qat") {
        o.qat = v.get<bool>();
      } else if (k == "bits16" || k == "output_feature_16bit_names_list") {
        o.bits16 = json_list(v, k, origin);
      } else if (k == "out16") {
        o.out16 = json_list(v, k, origin);
      } else if (k == "bits8") {
        o.bits8 = json_list(v, k, origin);
      } else if (k == "params16" || k == "params_16bit_names_list") {
        o.params16 = json_list(v, k, origin);
      } else if (k == "params8") {
        o.params8 = json_list(v, k, origin);
      } else if (k == "deny" || k == "deny_list:layer_name") {
        for (const auto& e : json_list(v, k, origin)) deny().push_back(e);
      } else if (k == "deny_list" || k == "deny_list:layer_type") {
        for (const auto& e : json_list(v, k, origin)) deny().push_back(e.rfind("op:", 0) == 0 ? e : "op:" + e);
      } else if (k == "allow") {
        o.allow = json_list(v, k, origin);
      } else if (k == "disable_pass") {
        o.disabled_passes = json_list(v, k, origin);
      } else if (k == "calib") {
        job.calib = json_list(v, k, origin);
      } else if (k == "stats") {
        job.stats = json_list(v, k, origin);
      } else if (k == "shape") {
        o.shapes = cli ? parse_shape_options(json_list(v, k, origin)) : json_shapes(v, origin);
      } else if (k == "headroom16") {
        o.headroom16 = v.get<double>();
        FP_CHECK(o.headroom16 >= 1 && o.headroom16 <= 1000, opt(k), " must be in [1, 1000], not ", o.headroom16);
      } else if (k == "bias_correction") {
        o.bias_correction = v.get<bool>();
      } else if (k == "adaptive_rounding") {
        o.adaptive_rounding = v.get<bool>();
      } else if (k == "channel_equalization") {
        o.channel_equalization = v.get<bool>();
      } else if (k == "narrow_intermediates") {
        o.wide_intermediates = !v.get<bool>();
      } else if (k == "narrow_stream") {
        o.wide_stream = !v.get<bool>();
      } else if (k == "narrow_softmax") {
        o.wide_softmax = !v.get<bool>();
      } else if (k == "per_tensor_weights") {
        o.per_tensor_weights = v.get<bool>();
      } else if (k == "symmetric") {
        o.asymmetric = !v.get<bool>();
      } else if (k == "asymmetric") {
        o.asymmetric = v.get<bool>();
      } else if (k == "auto_mixed" || k == "mixed_precision_factor") {
        job.auto_mixed = v.get<double>();
        FP_CHECK(job.auto_mixed == 0 || job.auto_mixed >= 1, opt(k), " must be >= 1 (or 0: off), not ", job.auto_mixed);
      } else if (k == "range_search") {
        job.range_search = v.get<bool>();
      } else if (k == "range_factors") {
        FP_CHECK(v.is_object(), opt(k), ": expected an object {\"tensor\": factor}");
        o.range_factors.clear();
        for (const auto& [t, f] : v.items()) {
          double x = f.get<double>();
          FP_CHECK(x > 0 && x <= 1000, opt(k), " '", t, "': the factor must be in (0, 1000], not ", x);
          o.range_factors[t] = x;
        }
      } else if (k == "calibration_frames") {
        job.calibration_frames = v.get<int>();
      } else {
        fail(origin, ": unknown option '", k, "'");
      }
    } catch (const nlohmann::json::exception&) {
      fail(opt(k), ": wrong value type (", v.type_name(), ")");
    }
  }
}

std::unique_ptr<CalibrationSource> open_job_calibration(const CompileJob& job) {
  if (job.calib.empty()) return nullptr;
  std::unique_ptr<CalibrationSource> calib = open_calibration(job.calib);
  if (job.calibration_frames > 0)
    calib = std::make_unique<FirstSamples>(std::move(calib), static_cast<size_t>(job.calibration_frames));
  return calib;
}

std::shared_ptr<CalibrationCache> load_merged_calibration(const std::vector<std::string>& paths, const std::string& option) {
  FP_CHECK(!paths.empty(), option, ": no statistics files");
  std::shared_ptr<CalibrationCache> merged = load_calibration(paths[0]);
  for (size_t i = 1; i < paths.size(); ++i) {
    try {
      merge_calibration(*merged, *load_calibration(paths[i]));
    } catch (const Error& e) {
      fail(option, " '", paths[i], "': ", e.what());
    }
  }
  return merged;
}

std::shared_ptr<CalibrationCache> job_statistics(const CompileJob& job) {
  if (job.stats.empty()) return job.stats_value;
  FP_CHECK(!job.stats_value, "give calibration statistics once (files or a value)");
  return load_merged_calibration(job.stats, "--stats");
}

CompileJobResult run_compile_job(const std::string& model_path, const CompileJob& job, const CalibrationSource* calib) {
  CompileOptions o = job.options;
  if (auto stats = job_statistics(job)) o.calibration_cache = stats;
  FP_CHECK(o.bits8.empty() || o.bits == 16,
           "bits8 (--bits8) keeps layers at 8 bits in a 16-bit program: use it with bits 16 (--bits 16)");
  nlohmann::json auto_mixed, range_search;
  CompileJobResult r;
  if ((job.range_search || job.auto_mixed > 0) && !o.calibration_cache)
    o.calibration_cache = make_calibration_cache();  // the searches and the final compile calibrate once
  if (job.range_search) {
    FP_CHECK(calib, "the range search needs calibration samples to measure the output error");
    RangeSearchResult rs = choose_ranges(model_path, o, *calib);
    o.range_factors = rs.factors;
    range_search = rs.report;
    r.mixed_precision = nlohmann::json{{"range_factors", o.range_factors}};
    if (o.progress)
      o.progress(cat("range-search: ", rs.factors.size(), " range(s) changed, output SNR ",
                     rs.report["output_snr_db"]["calibrated"].get<double>(), " -> ",
                     rs.report["output_snr_db"]["chosen"].get<double>(), " dB on the calibration samples"));
  }
  if (job.auto_mixed > 0) {
    FP_CHECK(calib, "auto mixed precision needs calibration samples to measure sensitivity");
    AutoMixedResult am = choose_mixed_precision(model_path, o, *calib, job.auto_mixed);
    for (const auto& n : am.bits16) o.bits16.push_back(n);
    for (const auto& n : am.out16) o.out16.push_back(n);
    auto_mixed = am.report;
    if (r.mixed_precision.is_null()) r.mixed_precision = nlohmann::json::object();
    r.mixed_precision["bits16"] = o.bits16;
    if (!o.out16.empty()) r.mixed_precision["out16"] = o.out16;
    if (o.progress)
      o.progress(cat("auto-mixed: ", am.bits16.size(), " layer(s) and ", am.out16.size(), " output(s) at 16 bits, cost ",
                     am.report["cost_chosen"].get<double>(),
                     " of budget ", am.report["budget"].get<double>()));
  }
  r.compiled = compile_model(model_path, o, calib);
  if (!range_search.is_null()) {
    r.compiled.report["range_search"] = range_search;
    r.compiled.report_text += cat("\nrange search (--range-search): ", o.range_factors.size(),
                                  " calibrated range(s) scaled, output SNR on the calibration samples ",
                                  range_search["output_snr_db"]["calibrated"].get<double>(), " -> ",
                                  range_search["output_snr_db"]["chosen"].get<double>(),
                                  " dB; factors in mixed_precision.json\n");
  }
  if (!auto_mixed.is_null()) {
    r.compiled.report["auto_mixed"] = auto_mixed;
    r.compiled.report_text += cat("\nauto mixed precision (--auto-mixed ", job.auto_mixed, "): ", auto_mixed["bits16"].size(),
                                  " layer(s) and ", auto_mixed["out16"].size(),
                                  " output(s) at 16 bits, listed in mixed_precision.json\n");
  }
  return r;
}

void write_compile_dir(const CompileJobResult& r, const std::string& dir) {
  write_compile_dir(r.compiled.program, r.compiled.report, r.compiled.report_text, r.mixed_precision, dir);
}

void write_compile_dir(const Program& program, const nlohmann::json& report, const std::string& report_text,
                       const nlohmann::json& mixed_precision, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  FP_CHECK(!ec, "output folder '", dir, "': ", ec.message());
  save_program(program, (fs::path(dir) / "model.fxp").string());
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream f(fs::path(dir) / name);
    f << text;
    FP_CHECK(f.good(), "output folder '", dir, "': cannot write ", name);
  };
  write("compile_report.json", report.dump(2) + "\n");
  write("compile_report.txt", report_text);
  // A reusable overrides file: `--config DIR/mixed_precision.json` reproduces the choice.
  if (!mixed_precision.is_null()) write("mixed_precision.json", mixed_precision.dump(1) + "\n");
}

}  // namespace fixpoint
