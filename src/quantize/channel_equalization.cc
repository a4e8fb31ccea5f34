// Channel equalization (docs/arithmetic.md (7d)). Cross-layer equalization (Nagel et al. 2019,
// "Data-Free Quantization") rescales channel c of an activation by 1/s_c: its producers' output
// rows and biases are divided by s_c, its consumers' input columns multiplied by s_c, and Relu
// and MaxPool between them commute with a positive scale, so float computes the same function.
// Here s_c comes from the activation's calibrated per-channel ranges r_c (not the weights): one
// per-tensor 8-bit scale serves channels whose ranges differ tenfold (Zero-DCE's e6 output:
// 5.6 down to 0.6), and the small channels keep a few codes; after the rescaling every channel
// spans about the geometric mean of the ranges. Weights are quantized per output channel, so
// the producers lose nothing; the consumers' rows mix columns of other magnitudes.
#include "quantize/channel_equalization.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

#include "quantize/fnv_hash.h"

namespace fixpoint {
namespace {

// s_c = clamp(r_c / geometric mean of r, 1/kMaxFactor, kMaxFactor)^kAlpha. kAlpha = 1 would give
// every channel the same range: on Zero-DCE's dev split it measured the same as 0.5 (+2.06 and
// +2.02 dB), but on data it was not chosen on it lost where calibration is thin (SqueezeNet of the
// zoo, 4 calibration images: output SNR 38.2 -> 28.9 dB; the integration test's Zero-DCE images
// -0.3 dB, 0.5 +1.4 dB): each channel's maximum over few samples underestimates what the next
// input brings, and a fully equalized tensor gives no channel headroom. 0.5 is the classic
// balance (the geometric mean of the old range and the common one). The clamp keeps nearly dead
// channels from scaling their producer rows by thousands.
constexpr double kAlpha = 0.5;
constexpr double kMaxFactor = 16.0;
constexpr int kMaxAddDepth = 8;  // partial sums of split_concat_conv: one Add per Concat input

class GroupFinder {
 public:
  explicit GroupFinder(const Graph& g) : g_(g), prod_(g.producers()), uses_(g.use_counts()) {
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (const auto& in : g.nodes[i].inputs)
        if (!in.empty()) readers_[in].push_back(i);
  }

  std::vector<EqualizationGroup> groups() {
    std::vector<EqualizationGroup> r;
    std::set<std::string> roots;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (n.op_type != "Conv" || !n.domain.empty() || n.inputs.empty() || n.inputs[0].empty()) continue;
      std::string root = root_of(n.inputs[0]);
      if (!roots.insert(root).second) continue;
      EqualizationGroup grp;
      if (collect_producers(root, grp, 0) && collect_consumers(root, grp)) r.push_back(std::move(grp));
    }
    return r;
  }

 private:
  const Tensor* float_const(const std::string& name) const {
    auto it = g_.initializers.find(name);
    return it != g_.initializers.end() && it->second.dtype() == DType::Float32 ? &it->second : nullptr;
  }
  bool read_only_by(const std::string& t, size_t node) const {
    auto it = readers_.find(t);
    return it != readers_.end() && it->second.size() == 1 && it->second[0] == node && !g_.is_graph_output(t);
  }
  bool plain(const Node& n) const { return n.domain.empty() && n.outputs.size() == 1 && !n.outputs[0].empty(); }

  // The tensor a chain of Relu / MaxPool starts from.
  std::string root_of(std::string t) const {
    for (int hops = 0; hops < 64; ++hops) {
      auto p = prod_.find(t);
      if (p == prod_.end()) break;
      const Node& n = g_.nodes[p->second];
      if (!plain(n) || (n.op_type != "Relu" && n.op_type != "MaxPool")) break;
      t = n.inputs[0];
    }
    return t;
  }

  // A Conv whose output rows may be scaled: constant float weights and bias read by it alone.
  bool scalable_producer(size_t i) const {
    const Node& n = g_.nodes[i];
    if (n.op_type != "Conv" || !plain(n) || n.inputs.size() < 2) return false;
    const Tensor* w = float_const(n.inputs[1]);
    if (!w || w->rank() < 3 || !read_only_by(n.inputs[1], i)) return false;
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
      const Tensor* b = float_const(n.inputs[2]);
      if (!b || b->numel() != w->dim(0) || !read_only_by(n.inputs[2], i)) return false;
    }
    return true;
  }

  // t comes from a scalable Conv, or from an Add of such tensors, each read by that Add alone.
  bool collect_producers(const std::string& t, EqualizationGroup& grp, int depth) const {
    auto p = prod_.find(t);
    if (p == prod_.end()) return false;
    const Node& n = g_.nodes[p->second];
    if (scalable_producer(p->second)) {
      int64_t m = float_const(n.inputs[1])->dim(0);
      if (grp.channels && grp.channels != m) return false;
      grp.channels = m;
      grp.producers.push_back(p->second);
      grp.tensors.push_back(t);
      return true;
    }
    if (n.op_type != "Add" || !plain(n) || n.inputs.size() != 2 || depth >= kMaxAddDepth) return false;
    for (const auto& u : n.inputs) {
      auto c = uses_.find(u);
      if (u.empty() || c == uses_.end() || c->second != 1 || !collect_producers(u, grp, depth + 1)) return false;
    }
    grp.tensors.push_back(t);
    return true;
  }

  // Every reader of the root's scaled tensors is a Relu, a MaxPool or a group-1 Conv reading it
  // as data; at least one is a Conv.
  bool collect_consumers(const std::string& root, EqualizationGroup& grp) const {
    std::deque<std::string> todo{root};
    std::set<std::string> seen(grp.tensors.begin(), grp.tensors.end());
    while (!todo.empty()) {
      std::string t = todo.front();
      todo.pop_front();
      if (g_.is_graph_output(t)) return false;
      auto rd = readers_.find(t);
      if (rd == readers_.end()) return false;
      for (size_t i : rd->second) {
        const Node& n = g_.nodes[i];
        bool only_data = std::count(n.inputs.begin(), n.inputs.end(), t) == 1 && n.inputs[0] == t;
        if (!plain(n) || !only_data) return false;
        if (n.op_type == "Relu" || n.op_type == "MaxPool") {
          if (seen.insert(n.outputs[0]).second) {
            grp.tensors.push_back(n.outputs[0]);
            todo.push_back(n.outputs[0]);
          }
          continue;
        }
        const Tensor* w = n.inputs.size() >= 2 ? float_const(n.inputs[1]) : nullptr;
        if (n.op_type != "Conv" || n.attr_int("group", 1) != 1 || !w || w->rank() < 3 || w->dim(1) != grp.channels ||
            !read_only_by(n.inputs[1], i))
          return false;
        if (std::find(grp.consumers.begin(), grp.consumers.end(), i) == grp.consumers.end()) grp.consumers.push_back(i);
        if (std::find(grp.read.begin(), grp.read.end(), t) == grp.read.end()) grp.read.push_back(t);
      }
    }
    return !grp.consumers.empty();
  }

  const Graph& g_;
  std::map<std::string, size_t> prod_;
  std::map<std::string, int> uses_;
  std::map<std::string, std::vector<size_t>> readers_;
};

// s_c from the ranges of the tensors the consumers read; empty when a range is missing (statistics
// made without them) or fewer than two channels are ever nonzero.
std::vector<double> factors_of(const EqualizationGroup& grp, const std::map<std::string, ChannelRanges>& ranges) {
  size_t C = static_cast<size_t>(grp.channels);
  for (const auto& t : grp.tensors) {
    auto it = ranges.find(t);
    if (it == ranges.end() || it->second.lo.size() != C) return {};
  }
  std::vector<double> r(C, 0.0);
  for (const auto& t : grp.read) {
    const ChannelRanges& cr = ranges.at(t);
    for (size_t c = 0; c < C; ++c)
      if (cr.lo[c] <= cr.hi[c]) r[c] = std::max({r[c], std::abs(cr.lo[c]), std::abs(cr.hi[c])});
  }
  double log_sum = 0;
  size_t active = 0;
  for (double v : r)
    if (v > 0 && std::isfinite(v)) log_sum += std::log(v), ++active;
  if (active < 2) return {};
  double mean = std::exp(log_sum / static_cast<double>(active));
  std::vector<double> s(C, 1.0);
  for (size_t c = 0; c < C; ++c)
    if (r[c] > 0 && std::isfinite(r[c]))
      s[c] = std::pow(std::clamp(r[c] / mean, 1.0 / kMaxFactor, kMaxFactor), kAlpha);
  return s;
}

// A name for the rescaled copy of an initializer: distinct factors give distinct names, so the
// prepared-op cache of a ModelCompiler never mixes two rescalings of one weight.
std::string rescaled_name(const std::string& name, const std::vector<double>& s) {
  Fnv1a h;
  h.add(std::string_view(reinterpret_cast<const char*>(s.data()), s.size() * sizeof(double)));
  return name + "/equalized_" + h.hex();
}

// Replaces node input `slot`'s initializer by a copy whose element at channel index c along
// `axis` (0: output rows, 1: input columns) is multiplied by mult[c] (scaled_channels: rows
// through a [1, rows, rest] view).
void rescale_input(Graph& g, Node& n, size_t slot, int axis, const std::vector<double>& mult,
                   const std::vector<double>& s) {
  const std::string old = n.inputs[slot];
  const Tensor& w = g.initializers.at(old);
  Tensor t = axis == 0 ? scaled_channels(w.reshaped({1, w.dim(0), w.numel() / w.dim(0)}), mult).reshaped(w.shape())
                       : scaled_channels(w, mult);
  std::string name = rescaled_name(old, s);
  g.initializers.erase(old);
  g.initializers[name] = std::move(t);
  n.inputs[slot] = name;
}

}  // namespace

std::vector<EqualizationGroup> equalization_groups(const Graph& g) { return GroupFinder(g).groups(); }

bool equalization_applies(const CompileContext& cx) {
  return cx.opts.channel_equalization && cx.opts.bits == 8 && !cx.opts.qat && cx.qdq.activations.empty() &&
         cx.qdq.weights.empty();
}

std::set<std::string> equalization_tensors(const Graph& g) {
  std::set<std::string> r;
  for (const auto& grp : equalization_groups(g)) r.insert(grp.tensors.begin(), grp.tensors.end());
  return r;
}

void equalize_channels(CompileContext& cx) {
  if (cx.channels_equalized) return;
  cx.channels_equalized = true;
  int groups = 0, skipped = 0;
  nlohmann::json nodes = nlohmann::json::array();
  for (const EqualizationGroup& grp : equalization_groups(cx.g)) {
    std::vector<double> s = factors_of(grp, cx.channel_ranges);
    if (s.empty()) {
      ++skipped;
      continue;
    }
    std::vector<double> inv(s.size());
    for (size_t c = 0; c < s.size(); ++c) inv[c] = 1.0 / s[c];
    for (size_t i : grp.producers) {
      Node& n = cx.g.nodes[i];
      rescale_input(cx.g, n, 1, 0, inv, s);
      if (n.inputs.size() > 2 && !n.inputs[2].empty()) rescale_input(cx.g, n, 2, 0, inv, s);
      nodes.push_back(n.name);
    }
    for (size_t i : grp.consumers) {
      rescale_input(cx.g, cx.g.nodes[i], 1, 1, s, s);
      nodes.push_back(cx.g.nodes[i].name);
    }
    for (const auto& t : grp.tensors) {
      cx.prog.channel_factors[t] = inv;
      if (cx.stats_equalized) continue;
      // The tensor's range in the program's units: channel c's range divided by s_c (exact for
      // the float graph the rewrite leaves; the histogram pass runs after this, on that graph).
      const ChannelRanges& cr = cx.channel_ranges.at(t);
      auto st = cx.stats.find(t);
      if (st != cx.stats.end() && st->second.seen()) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t c = 0; c < s.size(); ++c)
          if (cr.lo[c] <= cr.hi[c]) lo = std::min(lo, cr.lo[c] * inv[c]), hi = std::max(hi, cr.hi[c] * inv[c]);
        if (lo <= hi) st->second.lo = lo, st->second.hi = hi;
      }
      auto ch = cx.channels.find(t);
      if (ch != cx.channels.end() && ch->second.axis == 1 && ch->second.sum.size() == s.size())
        for (size_t c = 0; c < s.size(); ++c) ch->second.sum[c] *= inv[c];
    }
    ++groups;
  }
  if (groups) cx.stats_equalized = true;  // (a graph without groups has nothing to move: its statistics merge with any)
  if (groups || skipped)
    cx.log_rewrite("channel_equalization",
                   cat("rescaled the channels of ", groups, " activation(s) between Convs by their calibrated ranges",
                       skipped ? cat(" (", skipped, " left as they are: no per-channel ranges, or fewer than two channels ever nonzero)") : ""),
                   nodes);
}

}  // namespace fixpoint
