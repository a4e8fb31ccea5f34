// A compiled program as an ONNX QDQ model: what the program quantizes, where, and how, in the
// form every ONNX toolchain reads (docs/debugging.md "QDQ export"). The float ops between the
// pairs are the program's ops as ONNX ops: running the model in float with each pair rounding
// to the program's codes is the QDQ reading of the program (ONNX rounds half to even, the
// program half up: docs/arithmetic.md (2)).
#include "fixpoint/qdq_export.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <type_traits>

#include "fixpoint/fixedpoint.h"
#include "fixpoint/onnx_import.h"

namespace fixpoint {
namespace {

class QdqBuilder {
 public:
  explicit QdqBuilder(const Program& p) : p_(p) {
    opset_ = std::numeric_limits<int>::max();
    for (const auto& op : p.ops)
      if (op.node.domain.empty() && op.node.opset > 0) opset_ = std::min(opset_, op.node.opset);
    if (opset_ == std::numeric_limits<int>::max()) opset_ = 13;
    g_.name = "fixpoint_qdq";
    g_.opsets[""] = opset_;
    for (const auto& in : p.inputs) g_.inputs.push_back(in);
    for (const auto& out : p.outputs) g_.outputs.push_back(out);
  }

  Graph build() {
    for (const auto& in : p_.inputs)
      if (quantized(in.name)) qdq(in.name, in.name + "/dq", q(in.name), in.name);
    for (const auto& op : p_.ops) emit(op);
    return std::move(g_);
  }

 private:
  const QParams& q(const std::string& t) const {
    static const QParams kFloat;
    auto it = p_.tensors.find(t);
    return it == p_.tensors.end() ? kFloat : it->second;
  }
  bool quantized(const std::string& t) const { return !t.empty() && !q(t).is_float(); }
  bool is_input(const std::string& t) const {
    return std::any_of(p_.inputs.begin(), p_.inputs.end(), [&](const ValueInfo& v) { return v.name == t; });
  }
  // The name readers use for t's (dequantized) value, and the one t's producer writes before its pair.
  std::string read(const std::string& t) const { return quantized(t) && is_input(t) ? t + "/dq" : t; }
  std::string write(const std::string& t) const { return quantized(t) ? t + "/float" : t; }

  // ONNX's own Q/DQ from opset 13 (per-axis scales) for 8-bit codes and int32 biases; ONNX
  // Runtime's com.microsoft Q/DQ for 16-bit codes and in older opsets.
  std::string qdq_domain(DType t) const {
    bool standard = opset_ >= 13 && (t == DType::Int8 || t == DType::UInt8 || t == DType::Int32);
    if (!standard) g_.opsets["com.microsoft"] = 1;
    return standard ? "" : "com.microsoft";
  }

  void add_node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                const std::string& name, std::map<std::string, Attribute> attrs = {}, const std::string& domain = "") {
    Node n;
    n.op_type = op;
    n.domain = domain;
    n.name = name;
    n.opset = domain.empty() ? opset_ : 1;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.attrs = std::move(attrs);
    g_.nodes.push_back(std::move(n));
  }
  std::string constant(const std::string& name, Tensor t) {
    g_.initializers[name] = std::move(t);
    return name;
  }
  std::string scalar(const std::string& name, float v) { return constant(name, Tensor::from_f32({v}, {})); }

  // from -> QuantizeLinear -> DequantizeLinear -> to, at encoding qp.
  void qdq(const std::string& from, const std::string& to, const QParams& qp, const std::string& label) {
    Tensor zp(qp.type, {});
    zp.set_f64(0, static_cast<double>(qp.zero_point));
    std::string s = scalar(label + "/scale", static_cast<float>(qp.scale));
    std::string z = constant(label + "/zero_point", zp);
    std::string d = qdq_domain(qp.type);
    add_node("QuantizeLinear", {from, s, z}, {label + "/q"}, label + "/QuantizeLinear", {}, d);
    codes_[to] = label + "/q";
    add_node("DequantizeLinear", {label + "/q", s, z}, {to}, label + "/DequantizeLinear", {}, d);
  }

  // DequantizeLinear of integer codes with one scale per slice along `axis` (or one): -> its output.
  std::string dq_codes(const std::string& label, Tensor codes, const std::vector<double>& scales, int64_t axis) {
    Tensor s(DType::Float32, scales.size() == 1 ? Shape{} : Shape{static_cast<int64_t>(scales.size())});
    for (size_t i = 0; i < scales.size(); ++i) s.data<float>()[i] = static_cast<float>(scales[i]);
    std::string d = qdq_domain(codes.dtype());
    std::string c = constant(label + "/quantized", std::move(codes)), sn = constant(label + "/scale", s);
    std::map<std::string, Attribute> attrs;
    if (scales.size() > 1) attrs["axis"] = Attribute::of_int(axis);
    add_node("DequantizeLinear", {c, sn}, {label}, label + "/DequantizeLinear", attrs, d);
    return label;
  }

  std::vector<double> doubles(const Tensor& t) const {
    std::vector<double> v(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.get_f64(i);
    return v;
  }

  // Weights and bias of a weighted op as DequantizeLinear outputs (10), (11); the weights laid
  // out [N, K] (MatMul: transposed to ONNX's [K, N] when `kn`).
  std::pair<std::string, std::string> weights(const QOp& op, const params::Weighted& w, bool kn) {
    const std::string& label = op.node.name;
    std::vector<double> sw = doubles(w.weight_scale);
    Tensor codes = w.weight;
    if (kn) {
      int64_t N = codes.dim(0), K = codes.dim(1);
      Tensor t(codes.dtype(), {K, N});
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) t.set_f64(k * N + n, codes.get_f64(n * K + k));
      codes = t;
    }
    std::string wn = dq_codes(label + "/weight", codes, sw, kn ? 1 : 0);
    double sx = q(op.node.inputs[0]).scale;
    std::vector<double> sb(sw.size());
    bool fits = true;
    for (size_t c = 0; c < sw.size(); ++c) {
      sb[c] = sx * sw[c];
      double b = w.bias.get_f64(static_cast<int64_t>(c));
      fits = fits && b >= std::numeric_limits<int32_t>::min() && b <= std::numeric_limits<int32_t>::max();
    }
    std::string bn;
    if (fits) {
      Tensor b32(DType::Int32, {w.bias.numel()});
      for (int64_t c = 0; c < w.bias.numel(); ++c) b32.set_f64(c, w.bias.get_f64(c));
      bn = dq_codes(label + "/bias", b32, sb, 0);
    } else {  // int64 accumulators (§4): the bias codes' real value, in float
      Tensor bf(DType::Float32, {w.bias.numel()});
      for (int64_t c = 0; c < w.bias.numel(); ++c) bf.set_f64(c, w.bias.get_f64(c) * sb[static_cast<size_t>(c)]);
      bn = constant(label + "/bias", bf);
    }
    return {wn, bn};
  }

  // The fused activation of (13)'s clamp [lo, hi] as a Clip on its real bounds, when narrower
  // than the code range: y -> returns the clipped tensor.
  std::string clamp(const std::string& label, const std::string& y, const QParams& qy, int64_t lo, int64_t hi) {
    if (qy.is_float()) return y;
    fx::Range r = fx::range_of(qy.type);
    if (lo <= r.lo && hi >= r.hi) return y;
    float flo = static_cast<float>(static_cast<double>(lo - qy.zero_point) * qy.scale);
    float fhi = static_cast<float>(static_cast<double>(hi - qy.zero_point) * qy.scale);
    std::string out = label + "/clip";
    if (opset_ < 11) {
      std::map<std::string, Attribute> a{{"min", Attribute::of_float(flo)}, {"max", Attribute::of_float(fhi)}};
      add_node("Clip", {y}, {out}, label + "/Clip", a);
    } else {
      add_node("Clip", {y, scalar(label + "/clip_min", flo), scalar(label + "/clip_max", fhi)}, {out}, label + "/Clip");
    }
    return out;
  }

  // An op a fusion pass made, in ops of an opset without it: x -> y.
  void decomposed(const Node& n, const std::string& x, const std::string& y) {
    const std::string& l = n.name;
    if (n.op_type == "HardSwish") {
      std::map<std::string, Attribute> a{{"alpha", Attribute::of_float(1.0f / 6)}, {"beta", Attribute::of_float(0.5f)}};
      add_node("HardSigmoid", {x}, {l + "/hardsigmoid"}, l + "/HardSigmoid", a);
      add_node("Mul", {x, l + "/hardsigmoid"}, {y}, l + "/Mul");
    } else if (n.op_type == "Gelu") {
      add_node("Div", {x, scalar(l + "/sqrt2", static_cast<float>(std::sqrt(2.0)))}, {l + "/scaled"}, l + "/Div");
      add_node("Erf", {l + "/scaled"}, {l + "/erf"}, l + "/Erf");
      add_node("Add", {l + "/erf", scalar(l + "/one", 1.0f)}, {l + "/erf1"}, l + "/Add");
      add_node("Mul", {x, l + "/erf1"}, {l + "/xerf"}, l + "/Mul");
      add_node("Mul", {l + "/xerf", scalar(l + "/half", 0.5f)}, {y}, l + "/Half");
    } else if (n.op_type == "LayerNormalization") {
      FP_CHECK(n.attr_int("axis", -1) == -1, "export-qdq: ", n.label(), ": only axis -1 is written out in opset ", opset_);
      std::map<std::string, Attribute> a{{"axes", Attribute::of_ints({-1})}, {"keepdims", Attribute::of_int(1)}};
      add_node("ReduceMean", {x}, {l + "/mean"}, l + "/Mean", a);
      add_node("Sub", {x, l + "/mean"}, {l + "/centered"}, l + "/Sub");
      add_node("Mul", {l + "/centered", l + "/centered"}, {l + "/squared"}, l + "/Square");
      add_node("ReduceMean", {l + "/squared"}, {l + "/variance"}, l + "/Variance", a);
      add_node("Add", {l + "/variance", scalar(l + "/epsilon", n.attr_float("epsilon", 1e-5f))}, {l + "/var_eps"},
               l + "/AddEpsilon");
      add_node("Sqrt", {l + "/var_eps"}, {l + "/std"}, l + "/Sqrt");
      add_node("Div", {l + "/centered", l + "/std"}, {l + "/normalized"}, l + "/Div");
      std::string cur = l + "/normalized";
      if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
        add_node("Mul", {cur, n.inputs[1]}, {n.inputs.size() > 2 && !n.inputs[2].empty() ? l + "/scaled" : y}, l + "/Gamma");
        cur = l + "/scaled";
      }
      if (n.inputs.size() > 2 && !n.inputs[2].empty()) add_node("Add", {cur, n.inputs[2]}, {y}, l + "/Beta");
    } else {
      FP_CHECK(false, "export-qdq: ", n.label(), ": needs opset ", n.opset, " and the model's is ", opset_);
    }
  }

  void emit(const QOp& op) {
    Node n = op.node;
    FP_CHECK(!op.is<params::ConvTranspose>(), "export-qdq: ", n.label(), ": ConvTranspose is not exported yet");
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      auto c = op.const_inputs.find(i);
      if (c != op.const_inputs.end()) {
        const QParams& qc = q(n.inputs[i]);
        // (constant operands are quantized symmetrically: zero point 0)
        if (!g_.initializers.count(n.inputs[i] + "/quantized")) dq_codes(n.inputs[i], c->second, {qc.scale}, 0);
        continue;
      }
      const std::string& in = n.inputs[i];
      if (in.empty()) continue;
      auto fc = p_.float_constants.find(in);
      if (fc != p_.float_constants.end() && !g_.initializers.count(in)) g_.initializers[in] = fc->second;
      n.inputs[i] = read(in);
    }
    for (auto& o : n.outputs)
      if (!o.empty()) o = write(o);
    int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
    std::visit(
        [&](const auto& prm) {
          using P = std::decay_t<decltype(prm)>;
          if constexpr (std::is_base_of_v<params::Clamp, P>) {
            lo = prm.lo;
            hi = prm.hi;
          }
        },
        op.params);
    std::string raw = n.outputs.empty() ? "" : n.outputs[0];  // before the pair (and clamp)
    int needed = n.op_type == "HardSwish" ? 14 : n.op_type == "LayerNormalization" ? 17 : n.op_type == "Gelu" ? 20 : 0;
    if (op.is<params::Conv>() || op.is<params::MatMul>()) {
      const auto& w = std::get_if<params::Conv>(&op.params) ? static_cast<const params::Weighted&>(op.as<params::Conv>())
                                                            : static_cast<const params::Weighted&>(op.as<params::MatMul>());
      bool gemm = n.op_type == "Gemm";
      FP_CHECK(!gemm || n.attr_int("transA", 0) == 0, "export-qdq: ", n.label(), ": transA is not exported");
      auto [wn, bn] = weights(op, w, op.is<params::MatMul>() && !gemm);
      if (op.is<params::Conv>() || gemm) {
        n.inputs = {n.inputs[0], wn, bn};
        if (gemm) n.attrs = {{"transB", Attribute::of_int(1)}};
        n.outputs[0] = raw;
        g_.nodes.push_back(n);
      } else {
        add_node("MatMul", {n.inputs[0], wn}, {raw + "/matmul"}, n.name);
        add_node("Add", {raw + "/matmul", bn}, {raw}, n.name + "/bias");
      }
    } else if (op.is<params::Table>()) {
      table(op, n.inputs[0], raw);
    } else if (op.is<params::LayerNorm>() || op.is<params::InstanceNorm>() || op.is<params::PRelu>()) {
      if (op.is<params::PRelu>()) slope(op, n);
      else affine(op, n);
      if (needed > opset_) decomposed(n, n.inputs[0], raw);
      else g_.nodes.push_back(n);
    } else if (needed > opset_) {
      decomposed(n, n.inputs[0], raw);
    } else {
      g_.nodes.push_back(n);
    }
    if (raw.empty()) return;
    const std::string& out = op.node.outputs[0];
    if (quantized(out)) qdq(clamp(n.name, raw, q(out), lo, hi), out, q(out), out);
    for (size_t i = 1; i < op.node.outputs.size(); ++i) {
      const std::string& o = op.node.outputs[i];
      if (quantized(o)) qdq(write(o), o, q(o), o);
    }
  }

  // A table op (20) exactly: its input's codes index the table's real values (Gather), which
  // the output's pair maps back to the table's codes.
  void table(const QOp& op, const std::string& x, const std::string& y) {
    const auto& t = op.as<params::Table>();
    const std::string& l = op.node.name;
    const QParams& qy = q(op.node.outputs[0]);
    Tensor values(DType::Float32, {t.table.numel()});
    for (int64_t i = 0; i < t.table.numel(); ++i)
      values.data<float>()[i] = static_cast<float>((t.table.get_f64(i) - static_cast<double>(qy.zero_point)) * qy.scale);
    auto c = codes_.find(x);
    FP_CHECK(c != codes_.end(), "export-qdq: ", op.node.label(), ": its input '", x, "' has no codes");
    add_node("Cast", {c->second}, {l + "/codes"}, l + "/Cast", {{"to", Attribute::of_int(static_cast<int64_t>(DType::Int64))}});
    add_node("Sub", {l + "/codes", constant(l + "/in_lo", Tensor::from_i64({t.in_lo}, {}))}, {l + "/index"}, l + "/Index");
    add_node("Gather", {constant(l + "/table", values), l + "/index"}, {y}, l + "/Gather", {{"axis", Attribute::of_int(0)}});
  }

  // LayerNormalization / InstanceNormalization's gamma and beta as the program has them (30):
  // gamma_j = sign_j m_j 2^-n_j s_y, beta_j = B_j 2^-16 s_y; epsilon = EPS 2^-16 s_x^2.
  void affine(const QOp& op, Node& n) {
    const auto& nz = std::holds_alternative<params::LayerNorm>(op.params)
                         ? static_cast<const params::Normalize&>(op.as<params::LayerNorm>())
                         : static_cast<const params::Normalize&>(op.as<params::InstanceNorm>());
    double sy = q(op.node.outputs[0]).scale, sx = q(op.node.inputs[0]).scale;
    int64_t per = nz.mult.numel();
    Tensor gamma(DType::Float32, {per}), beta(DType::Float32, {per});
    for (int64_t j = 0; j < per; ++j) {
      gamma.set_f64(j, nz.sign.get_f64(j) * std::ldexp(nz.mult.get_f64(j), -static_cast<int>(nz.shift.get_f64(j))) * sy);
      beta.set_f64(j, std::ldexp(nz.beta.get_f64(j), -16) * sy);
    }
    n.inputs = {n.inputs[0], constant(n.name + "/gamma", gamma), constant(n.name + "/beta", beta)};
    n.attrs["epsilon"] = Attribute::of_float(static_cast<float>(std::ldexp(static_cast<double>(nz.eps_fx), -16) * sx * sx));
  }

  // PRelu's slope as the program has it (33): slope_k = sign_k m_k 2^-n_k s_y / s_x.
  void slope(const QOp& op, Node& n) {
    const auto& pr = op.as<params::PRelu>();
    double r = q(op.node.outputs[0]).scale / q(op.node.inputs[0]).scale;
    Tensor s(DType::Float32, pr.neg_mult.shape());
    for (int64_t k = 0; k < s.numel(); ++k)
      s.set_f64(k, pr.neg_sign.get_f64(k) * std::ldexp(pr.neg_mult.get_f64(k), -static_cast<int>(pr.neg_shift.get_f64(k))) * r);
    n.inputs = {n.inputs[0], constant(n.name + "/slope", s)};
  }

  const Program& p_;
  std::map<std::string, std::string> codes_;  // dequantized tensor -> its pair's codes
  mutable Graph g_;
  int opset_;
};

}  // namespace

Graph qdq_graph(const Program& p) {
  FP_CHECK(p.bits != 32, "export-qdq: a float reference program (--bits 32) has no quantization to export");
  return QdqBuilder(p).build();
}

void export_qdq(const Program& p, const std::string& path) { save_onnx(qdq_graph(p), path); }

}  // namespace fixpoint
