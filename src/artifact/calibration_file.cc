// Calibration statistics files (FILE.fxs): the container of container.h with magic "FXSTATS1"
// and a CBOR payload: the graph fingerprint, counts, per-tensor ranges and input-grid flags,
// |x| histograms as binary arrays of little-endian float64 bin counts, and the per-channel sums of
// Conv/MatMul/Gemm data inputs (bias correction) and per-channel ranges (channel equalization)
// the same way.
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

// float64 arrays as CBOR byte strings (little-endian, as the machines fixpoint runs on store them).
json doubles_binary(const std::vector<double>& v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(double));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return json::binary(std::move(bytes));
}
std::vector<double> binary_doubles(const json& j, const std::string& what) {
  const auto& bytes = j.get_binary();
  FP_CHECK(bytes.size() % sizeof(double) == 0, what, ": ", bytes.size(), " bytes, not a whole number of float64");
  std::vector<double> v(bytes.size() / sizeof(double));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

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
  for (const auto& [t, h] : c.hist) hist[t] = {{"max_abs", h.max_abs()}, {"counts", doubles_binary(h.counts())}};
  j["hist"] = std::move(hist);
  json channels = json::object();
  for (const auto& [t, cs] : c.channels)
    channels[t] = {{"axis", cs.axis}, {"sum", doubles_binary(cs.sum)}, {"count", doubles_binary(cs.count)}};
  j["channels"] = std::move(channels);
  json ranges = json::object();
  for (const auto& [t, cr] : c.channel_ranges) ranges[t] = {{"lo", doubles_binary(cr.lo)}, {"hi", doubles_binary(cr.hi)}};
  j["channel_ranges"] = std::move(ranges);
  j["equalized"] = c.equalized;
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
  std::string_view payload = container::decode(bytes, kMagic, kVersion, origin, "fixpoint calibration statistics",
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
      std::vector<double> counts = binary_doubles(h.at("counts"), cat("tensor '", t, "': histogram"));
      FP_CHECK(counts.size() == AbsHistogram::kBins, "tensor '", t, "': histogram of ", counts.size(), " bins, expected ",
               AbsHistogram::kBins);
      c->hist.emplace(t, AbsHistogram::from_counts(h.at("max_abs").get<double>(), std::move(counts)));
    }
    // Files made before channel sums were kept have none: bias correction then skips (its report line says so).
    const json channels = j.contains("channels") ? j.at("channels") : json::object();
    for (const auto& [t, ch] : channels.items()) {
      ChannelSums& cs = c->channels[t];
      cs.axis = ch.at("axis").get<int>();
      cs.sum = binary_doubles(ch.at("sum"), cat("tensor '", t, "': channel sums"));
      cs.count = binary_doubles(ch.at("count"), cat("tensor '", t, "': channel counts"));
      FP_CHECK(cs.sum.size() == cs.count.size(), "tensor '", t, "': ", cs.sum.size(), " channel sums but ", cs.count.size(), " counts");
    }
    // Files made before channel equalization have no per-channel ranges: a compile from them
    // equalizes nothing (and their fingerprint names an unequalized graph).
    const json ranges = j.contains("channel_ranges") ? j.at("channel_ranges") : json::object();
    for (const auto& [t, r] : ranges.items()) {
      ChannelRanges& cr = c->channel_ranges[t];
      cr.lo = binary_doubles(r.at("lo"), cat("tensor '", t, "': channel minima"));
      cr.hi = binary_doubles(r.at("hi"), cat("tensor '", t, "': channel maxima"));
      FP_CHECK(cr.lo.size() == cr.hi.size(), "tensor '", t, "': ", cr.lo.size(), " channel minima but ", cr.hi.size(), " maxima");
    }
    c->equalized = j.value("equalized", false);
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
