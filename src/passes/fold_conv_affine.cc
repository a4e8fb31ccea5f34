// Per-channel constant Mul/Add/Sub next to a Conv, folded into its weights and bias. PaddleOCR's
// PP-LCNet exports its "learnable affine blocks" this way (Conv -> Mul(s) -> Add(b), and
// act -> Mul(s) -> Add(b) -> 1x1 Conv); in fixed point each is a requantized step of its own.
//
// After a Conv/ConvTranspose with constant W, B (output y = conv(x) + B, channel m):
//   Mul(y, a):  W'[m] = a[m] W[m],  B'[m] = a[m] B[m]
//   Add(y, b):  B'[m] = B[m] + b[m];   Sub(y, b): B'[m] = B[m] - b[m];   Sub(b, y): W' = -W, B' = b - B
// Before a Conv (x' = a x or x + b on input channel c, kernel taps k):
//   Mul(x, a):  W'[m, c, k] = a[c] W[m, c, k]                 (any padding: a * 0 = 0)
//   Add(x, b):  B'[m] = B[m] + sum_{c,k} W[m, c, k] b[c]       (only without padding: padded taps
//                                                              read 0, not b)
// The constant must be one value per channel: a scalar or [.., C, 1, .., 1] aligned to axis 1.
#include <algorithm>
#include <cmath>

#include "fixpoint/conv_layout.h"
#include "fixpoint/graph_match.h"
#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

// c as one value per channel (C channels, tensor of rank `rank`, channel axis 1), or empty.
std::vector<double> per_channel(const Tensor& c, int64_t C, int64_t rank) {
  if (!dtype_is_float(c.dtype())) return {};
  if (c.numel() == 1 && c.rank() <= rank) return std::vector<double>(static_cast<size_t>(C), c.get_f64(0));
  int64_t pos = 1 - (rank - c.rank());  // the channel axis within c
  if (pos < 0 || c.rank() > rank || c.dim(pos) != C || c.numel() != C) return {};
  std::vector<double> v(static_cast<size_t>(C));
  for (int64_t i = 0; i < C; ++i) v[static_cast<size_t>(i)] = c.get_f64(i);
  return v;
}

bool has_padding(const Node& conv) {
  std::string ap = conv.attr_string("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID") return true;
  for (int64_t p : conv.attr_ints("pads"))
    if (p != 0) return true;
  return false;
}

class FoldConvAffine : public Pass {
 public:
  std::string name() const override { return "fold_conv_affine"; }
  int run(Graph& g, PassLog& log) override {
    int changed = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (fold_after(g, i, log) || fold_before(g, i, log)) {
        ++changed;
        i = static_cast<size_t>(-1);  // indices moved: rescan
      }
    }
    return changed;
  }

 private:
  struct ConvConsts {
    Tensor w, b;
  };
  // The conv's weights and bias (zeros if absent) as fresh float tensors, or false.
  static bool conv_consts(const Graph& g, const Node& conv, ConvConsts* cc) {
    if (!conv_layout::is_conv(conv) || conv.inputs.size() < 2) return false;
    const Tensor* w = match::constant(g, conv.inputs[1]);
    if (!w || w->dtype() != DType::Float32 || w->rank() < 3) return false;
    int64_t M = conv_layout::out_channels(conv, *w);
    cc->w = w->clone();
    cc->b = Tensor(DType::Float32, {M});
    if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) {
      const Tensor* b = match::constant(g, conv.inputs[2]);
      if (!b || b->dtype() != DType::Float32 || b->numel() != M) return false;
      for (int64_t m = 0; m < M; ++m) cc->b.data<float>()[m] = b->data<float>()[m];
    } else {
      for (int64_t m = 0; m < M; ++m) cc->b.data<float>()[m] = 0.0f;
    }
    return true;
  }
  static void store(Graph& g, Node& conv, const ConvConsts& cc) {
    std::string wname = conv.name + "/affine_weight", bname = conv.name + "/affine_bias";
    for (int k = 0; g.initializers.count(wname) || g.initializers.count(bname); ++k)
      wname = cat(conv.name, "/affine_weight", k), bname = cat(conv.name, "/affine_bias", k);
    g.initializers[wname] = cc.w;
    g.initializers[bname] = cc.b;
    conv.inputs.resize(3);
    conv.inputs[1] = wname;
    conv.inputs[2] = bname;
  }

  static bool fold_after(Graph& g, size_t i, PassLog& log) {
    Node& conv = g.nodes[i];
    ConvConsts cc;
    if (!conv_layout::is_conv(conv) || !match::inner(g, conv.outputs[0])) return false;
    const Node* op = match::single_consumer(g, conv.outputs[0]);
    if (!op || !op->domain.empty() || op->inputs.size() != 2 ||
        (op->op_type != "Mul" && op->op_type != "Add" && op->op_type != "Sub"))
      return false;
    int k = op->inputs[0] == conv.outputs[0] ? 1 : 0;  // the constant operand
    if (op->inputs[1 - k] != conv.outputs[0]) return false;
    const Tensor* c = match::constant(g, op->inputs[k]);
    if (!c || !conv_consts(g, conv, &cc)) return false;
    int64_t M = cc.b.numel();
    std::vector<double> v = per_channel(*c, M, cc.w.rank());
    if (v.empty()) return false;
    float* w = cc.w.data<float>();
    float* b = cc.b.data<float>();
    if (op->op_type == "Mul") {
      for (int64_t e = 0; e < cc.w.numel(); ++e) w[e] = static_cast<float>(w[e] * v[conv_layout::out_channel(conv, cc.w, e)]);
      for (int64_t m = 0; m < M; ++m) b[m] = static_cast<float>(b[m] * v[m]);
    } else if (op->op_type == "Add" || k == 1) {  // y + b or y - b
      double sign = op->op_type == "Add" ? 1.0 : -1.0;
      for (int64_t m = 0; m < M; ++m) b[m] = static_cast<float>(b[m] + sign * v[m]);
    } else {  // b - y
      for (int64_t e = 0; e < cc.w.numel(); ++e) w[e] = -w[e];
      for (int64_t m = 0; m < M; ++m) b[m] = static_cast<float>(v[m] - b[m]);
    }
    std::string what = op->label(), op_name = op->name, out = op->outputs[0];
    store(g, conv, cc);
    conv.outputs[0] = out;
    std::string conv_label = conv.label();
    std::vector<std::string> nodes = {op_name, conv.name};
    g.nodes.erase(std::find_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.name == op_name; }));
    log.add(cat("folded ", what, " into ", conv_label, " (output side)"), nodes);
    return true;
  }

  static bool fold_before(Graph& g, size_t i, PassLog& log) {
    const Node& op = g.nodes[i];
    if (!op.domain.empty() || op.inputs.size() != 2 || (op.op_type != "Mul" && op.op_type != "Add")) return false;
    if (!match::inner(g, op.outputs[0])) return false;
    const Node* conv_c = match::single_consumer(g, op.outputs[0]);
    if (!conv_c || conv_c->op_type != "Conv" || !conv_c->domain.empty() || conv_c->inputs[0] != op.outputs[0]) return false;
    int k = match::constant(g, op.inputs[1]) ? 1 : match::constant(g, op.inputs[0]) ? 0 : -1;
    if (k < 0 || match::constant(g, op.inputs[1 - k])) return false;
    ConvConsts cc;
    if (!conv_consts(g, *conv_c, &cc)) return false;
    if (op.op_type == "Add" && has_padding(*conv_c)) return false;
    int64_t M = cc.w.dim(0), Cg = cc.w.dim(1), taps = cc.w.numel() / (M * Cg);
    int64_t groups = conv_c->attr_int("group", 1), Mg = M / groups;
    // per_channel() accepts only constants aligned to axis 1 that do not broadcast x to a new shape.
    std::vector<double> v = per_channel(*match::constant(g, op.inputs[k]), Cg * groups, cc.w.rank());
    if (v.empty()) return false;
    float* w = cc.w.data<float>();
    float* b = cc.b.data<float>();
    for (int64_t m = 0; m < M; ++m) {
      double shift = 0;
      for (int64_t cl = 0; cl < Cg; ++cl) {
        double a = v[static_cast<size_t>((m / Mg) * Cg + cl)];
        for (int64_t t = 0; t < taps; ++t) {
          float& wv = w[(m * Cg + cl) * taps + t];
          if (op.op_type == "Mul") wv = static_cast<float>(wv * a);
          else shift += wv * a;
        }
      }
      b[m] = static_cast<float>(b[m] + shift);
    }
    std::string what = op.label(), op_name = op.name, x = op.inputs[1 - k], conv_name = conv_c->name;
    Node& conv = *std::find_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.name == conv_name; });
    store(g, conv, cc);
    conv.inputs[0] = x;
    std::string conv_label = conv.label();
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    log.add(cat("folded ", what, " into ", conv_label, " (input side)"), {op_name, conv_name});
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fold_conv_affine() { return std::make_unique<FoldConvAffine>(); }

}  // namespace fixpoint
