// Calibration statistics files (FILE.fxs): the container of container.h with magic "FXSTATS1"
// and a CBOR payload: the graph fingerprint, counts, per-tensor ranges and input-grid flags,
// and |x| histograms as binary arrays of little-endian float64 bin counts.
#include <cstring>

#include <nlohmann/json.hpp>

#include "container.h"
#include "fixpoint/artifact.h"
#include "quantize/calibration_stats.h"

namespace fixpoint {
namespace {

using json = nlohmann::json;
constexpr char kMagic[8] = {'F', 'X', 'S', 'T', 'A', 'T', 'S', '1'};
constexpr uint32_t kVersion = 1;

json nonfinite_json(const NonFinite& n) { return {{"nan", n.nan}, {"inf", n.inf}}; }
NonFinite nonfinite_from(const json& j) { return {j.at("nan").get<int64_t>(), j.at("inf").get<int64_t>()}; }

}  // namespace

std::string calibration_bytes(const CalibrationCache& c) {
  json j;
  j["fingerprint"] = c.fingerprint;
  j["method"] = c.method;
  j["histograms"] = c.histograms;
  j["samples"] = c.samples;
  j["input_nonfinite"] = nonfinite_json(c.input_nonfinite);
  j["tensor_nonfinite"] = nonfinite_json(c.tensor_nonfinite);
  json stats = json::object();
  for (const auto& [t, s] : c.stats) {
    json grid = json::array();
    for (bool g : s.on_grid) grid.push_back(g);
    // lo > hi (never seen) is kept as null: JSON/CBOR has no infinities to spare.
    stats[t] = {{"lo", s.seen() ? json(s.lo) : json()}, {"hi", s.seen() ? json(s.hi) : json()},
                {"grid_tracked", s.grid_tracked}, {"on_grid", grid}};
  }
  j["stats"] = std::move(stats);
  json hist = json::object();
  for (const auto& [t, h] : c.hist) {
    std::vector<uint8_t> bytes(h.counts().size() * sizeof(double));
    std::memcpy(bytes.data(), h.counts().data(), bytes.size());
    hist[t] = {{"max_abs", h.max_abs()}, {"counts", json::binary(std::move(bytes))}};
  }
  j["hist"] = std::move(hist);
  std::vector<uint8_t> cbor = json::to_cbor(j);
  return container::encode(kMagic, kVersion, std::string(cbor.begin(), cbor.end()));
}

void save_calibration(const CalibrationCache& c, const std::string& path) {
  container::write_file(path, calibration_bytes(c));
}

std::shared_ptr<CalibrationCache> load_calibration(const std::string& path) {
  return calibration_from_bytes(container::read_file(path, "calibration statistics"),
                                cat("calibration statistics '", path, "'"));
}

std::shared_ptr<CalibrationCache> calibration_from_bytes(const std::string& bytes, const std::string& origin) {
  std::string payload = container::decode(bytes, kMagic, kVersion, origin, "fixpoint calibration statistics",
                                          "measure them again (fixpoint calibrate)");
  const std::string& path = origin;
  auto c = std::make_shared<CalibrationCache>();
  c->given = true;
  try {
    json j = json::from_cbor(payload);
    c->filled = true;
    c->fingerprint = j.at("fingerprint").get<std::string>();
    c->method = j.at("method").get<std::string>();
    c->histograms = j.at("histograms").get<bool>();
    c->samples = j.at("samples").get<size_t>();
    c->input_nonfinite = nonfinite_from(j.at("input_nonfinite"));
    c->tensor_nonfinite = nonfinite_from(j.at("tensor_nonfinite"));
    for (const auto& [t, s] : j.at("stats").items()) {
      Stats& st = c->stats[t];
      if (!s.at("lo").is_null()) st.lo = s.at("lo").get<double>();
      if (!s.at("hi").is_null()) st.hi = s.at("hi").get<double>();
      st.grid_tracked = s.at("grid_tracked").get<bool>();
      const json& grid = s.at("on_grid");
      FP_CHECK(grid.size() == st.on_grid.size(), "tensor '", t, "': ", grid.size(), " grid flags, expected ", st.on_grid.size());
      for (size_t g = 0; g < st.on_grid.size(); ++g) st.on_grid[g] = grid[g].get<bool>();
    }
    for (const auto& [t, h] : j.at("hist").items()) {
      const auto& bytes = h.at("counts").get_binary();
      FP_CHECK(bytes.size() == AbsHistogram::kBins * sizeof(double), "tensor '", t, "': histogram of ", bytes.size(),
               " bytes, expected ", AbsHistogram::kBins * sizeof(double));
      std::vector<double> counts(AbsHistogram::kBins);
      std::memcpy(counts.data(), bytes.data(), bytes.size());
      c->hist.emplace(t, AbsHistogram::from_counts(h.at("max_abs").get<double>(), std::move(counts)));
    }
  } catch (const json::exception& e) {
    fail(path, ": malformed payload (", e.what(), ")");
  } catch (const Error& e) {
    fail(path, ": ", e.what());
  }
  return c;
}

std::string describe_calibration(const CalibrationCache& c) {
  return cat(c.samples, " sample(s), ", c.stats.size(), " tensor(s), ", c.histograms ? "ranges + histograms" : "ranges only",
             " (graph ", c.fingerprint, ")");
}

}  // namespace fixpoint
