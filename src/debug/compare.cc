#include "fixpoint/artifact.h"
#include "fixpoint/compare.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "fixpoint/error.h"
#include "fixpoint/fixedpoint.h"
#include "fixpoint/float_kernels.h"
#include "fixpoint/parallel.h"
#include "fixpoint/model.h"
#include "fixpoint/program.h"
#include "fixpoint/runtime.h"

namespace fixpoint {
double snr_db(double signal, double noise) {
  if (noise <= 0) return 200.0;  // exact: reported as 200 dB
  if (signal <= 0) return -200.0;
  return 10.0 * std::log10(signal / noise);
}

double LayerError::snr_db() const { return fixpoint::snr_db(signal, noise); }
namespace {

// (6) on an op's output; an error names the op and the tensor (a program whose encoding of a
// tensor disagrees with what the op computes is a compiler bug, and must say where).
Tensor dequantize_output(const QOp& op, const std::string& t, const Tensor& codes, const QParams& q) {
  try {
    return dequantize_tensor(codes, q);
  } catch (const Error& e) {
    fail(op.node.label(), ": output '", t, "': ", e.what());
  }
}

// The fixed-point tensors among n's inputs (each once).
std::vector<std::string> coded_inputs(const Node& n, const Program& p, const std::map<std::string, Tensor>& ref) {
  std::vector<std::string> r;
  for (const auto& in : n.inputs) {
    auto q = p.tensors.find(in);
    auto v = ref.find(in);
    if (in.empty() || q == p.tensors.end() || q->second.is_float() || v == ref.end() || !dtype_is_float(v->second.dtype()))
      continue;
    if (std::find(r.begin(), r.end(), in) == r.end()) r.push_back(in);
  }
  return r;
}

}  // namespace

double LayerError::local_snr_db() const { return fixpoint::snr_db(signal, local_noise); }
double LayerError::own_snr_db() const { return own_measured ? fixpoint::snr_db(signal, own_noise) : local_snr_db(); }
double LayerError::encoding_snr_db() const { return impact_noise > 0 ? fixpoint::snr_db(impact_signal, impact_noise) : 200.0; }
double LayerError::cosine() const {
  double d = std::sqrt(signal * got_sq);
  return d > 0 ? dot / d : 1.0;
}

Comparer::Comparer(const std::string& program_dir)
    : Comparer(load_program((std::filesystem::path(program_dir) / "model.fxp").string())) {}

Comparer::Comparer(Program program) : runner_(std::move(program)) {
  source_ = runner_.program().source_model;
  FP_CHECK(std::filesystem::exists(source_), "compare: the program's source model '", source_,
           "' is gone (the float reference is computed from it)");
  for (const auto& op : runner_.program().ops)
    for (const auto& o : op.node.outputs) {
      if (o.empty()) continue;
      LayerError e;
      e.name = op.node.name;
      e.op = op.node.op_type;
      e.kind = std::string(op.kind());
      e.output = o;
      auto q = runner_.program().tensors.find(o);
      bool coded = q != runner_.program().tensors.end() && !q->second.is_float();
      e.scale = coded ? q->second.scale : 0.0;
      e.bits = coded ? q->second.bits() : 32;
      e.lo = INFINITY;
      e.hi = -INFINITY;
      layers_.push_back(e);
    }
}

void Comparer::add_sample(const std::map<std::string, Tensor>& inputs) {
  // Float reference of the source model, every tensor kept (copies: the executor reuses buffers).
  // The model is imported again only when the input shapes change (they bind its dynamic dims).
  ShapeBindings shapes;
  for (const auto& [name, t] : inputs) shapes[name] = t.shape();
  if (!float_graph_ || shapes != float_shapes_) {
    PipelineOptions po;
    po.shapes = shapes;
    po.shapes_origin = "the input files";
    float_graph_ = std::make_unique<Graph>(load_model(source_, po));
    float_shapes_ = shapes;
  }
  const Graph& g = *float_graph_;
  std::map<std::string, Tensor> ref(inputs.begin(), inputs.end());
  for (const auto& [name, t] : g.initializers) ref.emplace(name, t);  // incl. folded shape arithmetic
  RunOptions ro;
  ro.on_node = [&](const Node& n, const std::vector<Tensor>& outs) {
    for (size_t i = 0; i < outs.size(); ++i)
      if (!n.outputs[i].empty()) ref[n.outputs[i]] = outs[i].clone();
  };
  ro.threads = default_threads();
  Executor(g, fast_float_kernels()).run(inputs, ro);
  const Program& p = runner_.program();
  // Tensors channel equalization rescaled ((7d)) are compared in the program's units (refp): what
  // its ops compute, and what their local errors feed them. The float graph's nodes (own error,
  // encoding impact) keep the model's units (ref).
  std::map<std::string, Tensor> refp = ref;  // (shares the tensors' storage)
  for (const auto& [t, f] : p.channel_factors)
    if (auto r = refp.find(t); r != refp.end()) r->second = scaled_channels(r->second, f);
  std::map<std::string, std::pair<Tensor, Tensor>> fixed;  // tensor -> (dequantized, codes)
  runner_.run(inputs, [&](const QOp& op, const std::vector<Tensor>& outs) {
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::string& t = op.node.outputs[i];
      auto q = p.tensors.find(t);
      if (t.empty()) continue;
      if (q == p.tensors.end() || q->second.is_float()) fixed[t] = {outs[i].clone(), Tensor()};
      else fixed[t] = {dequantize_output(op, t, outs[i], q->second), outs[i].clone()};
    }
  });
  std::map<std::string, const Node*> float_node;  // float-graph node by its first output
  for (const auto& n : g.nodes)
    if (!n.outputs.empty()) float_node[n.outputs[0]] = &n;
  std::map<std::string, Tensor> encoded;  // encoded copies of fixed-point tensors, made once
  std::map<std::string, std::pair<double, double>> one_input_impact;  // node -> (signal, noise)
  size_t li = 0;
  for (size_t k = 0; k < p.ops.size(); ++k) {
    const QOp& op = p.ops[k];
    std::vector<Tensor> local;
    bool local_done = false;
    for (size_t i = 0; i < op.node.outputs.size(); ++i) {
      const std::string& t = op.node.outputs[i];
      if (t.empty()) continue;
      LayerError& e = layers_[li++];
      auto r = refp.find(t);
      auto f = fixed.find(t);
      if (r == refp.end() || f == fixed.end() || !dtype_is_float(r->second.dtype()) ||
          r->second.shape() != f->second.first.shape())
        continue;
      if (!local_done) {
        // Inputs the float graph does not have (tensors a compile-time rewrite made, such as
        // split_concat_conv's partial sums) are taken as the program computed them: the local
        // error of such an op is then its own rounding.
        std::map<std::string, Tensor> patched;
        for (const auto& in : op.node.inputs)
          if (!in.empty() && !refp.count(in) && fixed.count(in)) {
            if (patched.empty()) patched = refp;
            patched[in] = fixed.at(in).first;
          }
        local = runner_.run_op_on_float(k, patched.empty() ? refp : patched);
        local_done = true;
      }
      const Tensor& a = r->second;
      const Tensor& b = f->second.first;
      Tensor lb = local.at(i);
      auto q = p.tensors.find(t);
      bool coded = q != p.tensors.end() && !q->second.is_float();
      if (coded && !dtype_is_float(lb.dtype())) lb = dequantize_output(op, t, lb, q->second);
      fx::Range range = coded ? fx::range_of(q->second.type) : fx::Range{0, 0};
      const Tensor& codes = f->second.second;
      // Own error: the same float node on the same encoded inputs (when the program op is that
      // node, unfused, and reads fixed-point tensors).
      Tensor own;
      auto fn = i == 0 ? float_node.find(t) : float_node.end();
      std::vector<std::string> enc;
      if (fn != float_node.end() && fn->second->name == op.node.name) {
        enc = coded_inputs(*fn->second, p, ref);
        if (!enc.empty()) own = run_encoded(*fn->second, enc, ref, encoded);
        if (auto ft = p.channel_factors.find(t); ft != p.channel_factors.end() && own.numel()) own = scaled_channels(own, ft->second);
        if (own.shape() != a.shape()) own = Tensor();
      }
      e.own_measured = e.own_measured || own.numel() > 0;
      // With one encoded input this run is also that input's impact on this node: keep its error
      // for measure_impacts instead of running the node again.
      std::pair<double, double>* impact = nullptr;
      if (own.numel() && enc.size() == 1) impact = &one_input_impact[fn->second->name];
      int64_t stride = std::max<int64_t>(1, a.numel() / 1500);
      for (int64_t j = 0; samples_ == 0 && j < a.numel() && e.sample_ref.size() < 1500; j += stride) {
        e.sample_ref.push_back(static_cast<float>(a.get_f64(j)));
        e.sample_fixed.push_back(static_cast<float>(b.get_f64(j)));
      }
      for (int64_t j = 0; j < a.numel(); ++j) {
        double x = a.get_f64(j), y = b.get_f64(j), z = lb.get_f64(j);
        if (!std::isfinite(x)) continue;
        e.signal += x * x;
        e.noise += (x - y) * (x - y);
        e.local_noise += (x - z) * (x - z);
        if (own.numel()) e.own_noise += (own.get_f64(j) - z) * (own.get_f64(j) - z);
        if (impact && std::isfinite(own.get_f64(j))) {
          impact->first += x * x;
          impact->second += (x - own.get_f64(j)) * (x - own.get_f64(j));
        }
        e.dot += x * y;
        e.got_sq += y * y;
        e.max_abs = std::max(e.max_abs, std::abs(x - y));
        e.sum_abs += std::abs(x - y);
        e.lo = std::min(e.lo, x);
        e.hi = std::max(e.hi, x);
        ++e.count;
        if (coded) {
          int64_t c = static_cast<int64_t>(codes.get_f64(j));
          if (c == range.lo || c == range.hi) {
            // At a limit of the code range while the float value lies beyond it: saturated.
            double edge = fx::dequantize(c, q->second.scale, q->second.zero_point);
            if ((c == range.hi && x > edge) || (c == range.lo && x < edge)) ++e.saturated;
          }
        }
      }
    }
  }
  measure_impacts(g, ref, encoded, one_input_impact);
  ++samples_;
}

Tensor Comparer::run_encoded(const Node& n, const std::vector<std::string>& encoded_inputs,
                             const std::map<std::string, Tensor>& ref, std::map<std::string, Tensor>& cache) const {
  const Program& p = runner_.program();
  std::vector<const Tensor*> ins;
  for (const auto& in : n.inputs) {
    auto r = ref.find(in);
    if (in.empty() || r == ref.end()) {
      ins.push_back(nullptr);
      continue;
    }
    if (std::find(encoded_inputs.begin(), encoded_inputs.end(), in) == encoded_inputs.end()) {
      ins.push_back(&r->second);
      continue;
    }
    auto it = cache.find(in);
    if (it == cache.end()) {
      // Encoded in the program's units, read back in the model's ((7d) rescaled tensors).
      const QParams& q = p.tensors.at(in);
      auto f = p.channel_factors.find(in);
      Tensor x = f == p.channel_factors.end() ? r->second : scaled_channels(r->second, f->second);
      Tensor d(DType::Float32, x.shape());
      for (int64_t i = 0; i < d.numel(); ++i)
        d.data<float>()[i] = fx::dequantize(q.quantize(x.get_f64(i)), q.scale, q.zero_point);
      if (f != p.channel_factors.end()) d = scaled_channels(d, f->second, true);
      it = cache.emplace(in, std::move(d)).first;
    }
    ins.push_back(&it->second);
  }
  return run_node(n, ins).at(0);
}

// Each float-graph node reading fixed-point tensors, run with one of them encoded at a time: the
// error at the node's output is that tensor's producer's impact on this consumer.
void Comparer::measure_impacts(const Graph& g, const std::map<std::string, Tensor>& ref,
                               std::map<std::string, Tensor>& cache,
                               const std::map<std::string, std::pair<double, double>>& known) {
  const Program& p = runner_.program();
  std::map<std::string, LayerError*> by_output;
  for (auto& e : layers_) by_output[e.output] = &e;
  for (const auto& n : g.nodes) {
    if (n.outputs.empty() || n.outputs[0].empty()) continue;
    auto want = ref.find(n.outputs[0]);
    if (want == ref.end() || !dtype_is_float(want->second.dtype())) continue;
    for (const auto& t : coded_inputs(n, p, ref)) {
      auto producer = by_output.find(t);
      if (producer == by_output.end()) continue;
      if (auto k = known.find(n.name); k != known.end()) {
        producer->second->impact_signal += k->second.first;
        producer->second->impact_noise += k->second.second;
        continue;
      }
      Tensor y = run_encoded(n, {t}, ref, cache);
      const Tensor& x = want->second;
      if (y.shape() != x.shape()) continue;
      for (int64_t i = 0; i < x.numel(); ++i) {
        double a = x.get_f64(i), b = y.get_f64(i);
        if (!std::isfinite(a) || !std::isfinite(b)) continue;
        producer->second->impact_signal += a * a;
        producer->second->impact_noise += (a - b) * (a - b);
      }
    }
  }
}

nlohmann::json Comparer::result(size_t worst_count) const {
  nlohmann::json layers = nlohmann::json::array();
  std::vector<const LayerError*> ranked;
  for (const auto& e : layers_) {
    if (!e.count) continue;
    layers.push_back({{"name", e.name}, {"op", e.op}, {"kind", e.kind}, {"output", e.output}, {"bits", e.bits},
                      {"snr_db", e.snr_db()}, {"local_snr_db", e.local_snr_db()}, {"own_snr_db", e.own_snr_db()},
                      {"encoding_snr_db", e.encoding_snr_db()}, {"cosine", e.cosine()},
                      {"max_abs_err", e.max_abs}, {"mean_abs_err", e.sum_abs / static_cast<double>(e.count)},
                      {"saturated_pct", e.saturated_pct()}, {"scale", e.scale}, {"range", {e.lo, e.hi}}});
    ranked.push_back(&e);
  }
  // Most guilty first: the lowest of own SNR (the error a layer adds by itself, without its
  // inputs' encodings) and encoding SNR (what its output encoding does to its consumers), ties
  // by accumulated SNR.
  std::stable_sort(ranked.begin(), ranked.end(), [](const LayerError* a, const LayerError* b) {
    if (a->guilt_snr_db() != b->guilt_snr_db()) return a->guilt_snr_db() < b->guilt_snr_db();
    return a->snr_db() < b->snr_db();
  });
  nlohmann::json worst = nlohmann::json::array();
  std::vector<std::string> seen;
  for (const auto* e : ranked) {
    if (worst.size() >= worst_count) break;
    if (std::find(seen.begin(), seen.end(), e->name) != seen.end()) continue;
    seen.push_back(e->name);
    worst.push_back(e->name);
  }
  return {{"program_source", source_}, {"samples", samples_}, {"layers", layers}, {"worst", worst}};
}

std::string compare_table(const nlohmann::json& r) {
  std::ostringstream s;
  s << std::left << std::setw(28) << "node" << std::setw(20) << "op" << std::right << std::setw(5) << "bits"
    << std::setw(10) << "SNR dB" << std::setw(10) << "local dB" << std::setw(9) << "cosine" << std::setw(11)
    << "max|err|" << std::setw(11) << "mean|err|" << std::setw(8) << "sat%" << std::setw(13) << "scale" << "\n";
  s << std::fixed;
  for (const auto& l : r["layers"]) {
    std::string name = l["name"].get<std::string>();
    if (name.size() > 27) name = name.substr(0, 24) + "...";
    s << std::left << std::setw(28) << name << std::setw(20) << l["op"].get<std::string>() << std::right
      << std::setw(5) << l["bits"].get<int>() << std::setprecision(1) << std::setw(10) << l["snr_db"].get<double>()
      << std::setw(10) << l["local_snr_db"].get<double>() << std::setprecision(4) << std::setw(9)
      << l["cosine"].get<double>() << std::setprecision(4) << std::setw(11) << l["max_abs_err"].get<double>()
      << std::setw(11) << l["mean_abs_err"].get<double>() << std::setprecision(2) << std::setw(8)
      << l["saturated_pct"].get<double>() << std::setprecision(4) << std::setw(13) << std::scientific
      << l["scale"].get<double>() << std::fixed << "\n";
  }
  s << "\nlayers adding the most error (lowest of own and encoding SNR):";
  for (const auto& w : r["worst"]) s << " " << w.get<std::string>();
  s << "\n";
  return s.str();
}

namespace {

const char* snr_color(double snr) { return snr < 20 ? "#f8c9c4" : snr < 40 ? "#fbeeb8" : "#cdeccd"; }

std::string html_escape(const std::string& x) {
  std::string o;
  for (char c : x) o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return o;
}

// Float (x) vs fixed (y) scatter with the y = x line, as inline SVG.
std::string scatter_svg(const LayerError& e) {
  const double W = 260, H = 260, m = 30;
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < e.sample_ref.size(); ++i) {
    lo = std::min({lo, static_cast<double>(e.sample_ref[i]), static_cast<double>(e.sample_fixed[i])});
    hi = std::max({hi, static_cast<double>(e.sample_ref[i]), static_cast<double>(e.sample_fixed[i])});
  }
  if (!(hi > lo)) hi = lo + 1;
  auto X = [&](double v) { return m + (v - lo) / (hi - lo) * (W - 2 * m); };
  auto Y = [&](double v) { return H - m - (v - lo) / (hi - lo) * (H - 2 * m); };
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\"><rect width=\"100%\" height=\"100%\" fill=\"white\" stroke=\"#999\"/><line x1=\"" << X(lo) << "\" y1=\"" << Y(lo)
    << "\" x2=\"" << X(hi) << "\" y2=\"" << Y(hi) << "\" stroke=\"#999\"/>";
  for (size_t i = 0; i < e.sample_ref.size(); ++i)
    s << "<circle cx=\"" << X(e.sample_ref[i]) << "\" cy=\"" << Y(e.sample_fixed[i]) << "\" r=\"1.3\" fill=\"#3b7dd8\"/>";
  s << "<text x=\"" << W / 2 << "\" y=\"" << H - 8 << "\" font-size=\"11\" text-anchor=\"middle\">float</text>"
    << "<text x=\"10\" y=\"" << H / 2 << "\" font-size=\"11\" transform=\"rotate(-90 10 " << H / 2 << ")\">fixed</text></svg>";
  return s.str();
}

// Histogram of (fixed - float) over the sampled values, 40 bins, as inline SVG.
std::string histogram_svg(const LayerError& e) {
  const double W = 300, H = 260, m = 30;
  std::vector<double> d;
  for (size_t i = 0; i < e.sample_ref.size(); ++i) d.push_back(static_cast<double>(e.sample_fixed[i]) - e.sample_ref[i]);
  double amax = 0;
  for (double v : d) amax = std::max(amax, std::abs(v));
  if (amax == 0) amax = 1;
  std::vector<int> bins(40, 0);
  for (double v : d) bins[std::min(39, static_cast<int>((v + amax) / (2 * amax) * 40))]++;
  int top = *std::max_element(bins.begin(), bins.end());
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\"><rect width=\"100%\" height=\"100%\" fill=\"white\" stroke=\"#999\"/>";
  double bw = (W - 2 * m) / 40;
  for (int b = 0; b < 40; ++b) {
    double h = top ? (H - 2 * m) * bins[b] / top : 0;
    s << "<rect x=\"" << m + b * bw << "\" y=\"" << H - m - h << "\" width=\"" << bw - 1 << "\" height=\"" << h
      << "\" fill=\"#d8843b\"/>";
  }
  s << std::setprecision(4) << "<text x=\"" << m << "\" y=\"" << H - 10 << "\" font-size=\"11\">" << -amax << "</text><text x=\""
    << W - m << "\" y=\"" << H - 10 << "\" font-size=\"11\" text-anchor=\"end\">" << amax << "</text><text x=\"" << W / 2
    << "\" y=\"" << H - 10 << "\" font-size=\"11\" text-anchor=\"middle\">fixed - float</text></svg>";
  return s.str();
}

}  // namespace

std::map<std::string, std::string> snr_colors(const nlohmann::json& r) {
  std::map<std::string, std::string> c;
  for (const auto& l : r["layers"]) {
    std::string name = l["name"].get<std::string>();
    if (!c.count(name)) c[name] = snr_color(l["snr_db"].get<double>());
  }
  return c;
}

std::string compare_html(const nlohmann::json& r, const std::vector<LayerError>& layers, const std::string& graph_svg) {
  std::ostringstream h;
  h << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>fixpoint compare</title><style>"
    << "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:13px}"
    << "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td.l{text-align:left}"
    << ".plots{display:flex;gap:1em;align-items:flex-start}.graph{max-height:900px;overflow:auto;border:1px solid #ccc}"
    << "</style></head><body><h1>fixpoint compare</h1><p>Float reference: "
    << html_escape(r["program_source"].get<std::string>()) << "; " << r["samples"].get<int>()
    << " input set(s). SNR: accumulated error of the fixed-point program; local: the layer fed with the float "
    << "reference's own inputs. Colors: red below 20 dB, yellow 20-40 dB, green above 40 dB.</p>";
  if (!r["layers"].empty()) {
    const auto& last = r["layers"].back();
    h << "<p>Last layer (" << html_escape(last["name"].get<std::string>()) << "): SNR " << std::fixed << std::setprecision(1)
      << last["snr_db"].get<double>() << " dB.</p>";
  }
  h << "<h2>Layers adding the most error</h2>";
  for (const auto& w : r["worst"]) {
    std::string name = w.get<std::string>();
    auto it = std::find_if(layers.begin(), layers.end(), [&](const LayerError& e) { return e.name == name && e.count; });
    if (it == layers.end()) continue;
    h << "<h3>" << html_escape(name) << " (" << html_escape(it->op) << ", " << it->bits << "-bit): local " << std::fixed
      << std::setprecision(1) << it->local_snr_db() << " dB, accumulated " << it->snr_db() << " dB</h3><div class=plots>"
      << scatter_svg(*it) << histogram_svg(*it) << "</div>";
  }
  if (!graph_svg.empty()) {
    std::string svg = graph_svg.substr(std::min(graph_svg.find("<svg"), graph_svg.size()));
    h << "<h2>Graph (accumulated SNR)</h2><div class=graph>" << svg << "</div>";
  }
  h << "<h2>All layers (program order)</h2><table><tr><th>node</th><th>op</th><th>bits</th><th>SNR dB</th>"
    << "<th>local dB</th><th>own dB</th><th>encoding dB</th><th>cosine</th><th>max |err|</th><th>mean |err|</th><th>saturated %</th><th>scale</th></tr>";
  for (const auto& l : r["layers"]) {
    h << "<tr><td class=l>" << html_escape(l["name"].get<std::string>()) << "</td><td class=l>"
      << html_escape(l["op"].get<std::string>()) << "</td><td>" << l["bits"].get<int>() << "</td><td style=\"background:"
      << snr_color(l["snr_db"].get<double>()) << "\">" << std::fixed << std::setprecision(1) << l["snr_db"].get<double>()
      << "</td><td style=\"background:" << snr_color(l["local_snr_db"].get<double>()) << "\">" << l["local_snr_db"].get<double>();
    for (const char* k : {"own_snr_db", "encoding_snr_db"})  // which side to blame (docs/debugging.md)
      h << "</td><td style=\"background:" << snr_color(l[k].get<double>()) << "\">" << l[k].get<double>();
    h << "</td><td>" << std::setprecision(4) << l["cosine"].get<double>() << "</td><td>" << l["max_abs_err"].get<double>()
      << "</td><td>" << l["mean_abs_err"].get<double>() << "</td><td>" << std::setprecision(2)
      << l["saturated_pct"].get<double>() << "</td><td>" << std::scientific << std::setprecision(3)
      << l["scale"].get<double>() << std::fixed << "</td></tr>";
  }
  h << "</table></body></html>\n";
  return h.str();
}

}  // namespace fixpoint
