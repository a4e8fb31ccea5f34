// Table ops (20): one output code per input code.
#include "quantize/prepare/prepare.h"

#include <cmath>

#include "fixpoint/graph_match.h"
#include "fixpoint/runtime.h"
#include "fixpoint/table_curve.h"
#include "quantize/activation_fusion.h"
#include "quantize/sign_analysis.h"

namespace fixpoint {

namespace {

// (20) composes: Add/Sub/Mul/Div by a one-element float constant after a table op becomes part
// of its function (TAB[q] = R(f'(x) / s_y) + z_y with f' = c ∘ f), one rounding instead of one
// per op, e.g. PP-LCNet's learnable affine 0.70 * HardSwish(x) + 0.24. Evaluated by the float
// kernels of the absorbed nodes on the table's float values.
// `h` follows the absorbed ops as h -> a1 h + a0 while they stay affine in h (not c / h).
struct Affine {
  double a1 = 1, a0 = 0;
  bool ok = true;
  void apply(const std::string& op, double k, bool k_first) {
    if (op == "Add") a0 += k;
    if (op == "Sub" && !k_first) a0 -= k;
    if (op == "Sub" && k_first) a1 = -a1, a0 = k - a0;
    if (op == "Mul") a1 *= k, a0 *= k;
    if (op == "Div" && !k_first) a1 /= k, a0 /= k;
    if (op == "Div" && k_first) ok = false;
  }
};

// One absorbed node and its constant operand.
struct Absorbed {
  Node node;
  const Tensor* k;
  size_t other;  // the constant's input index
};

// The scalar ops after op's output that its table absorbs (marked consumed; op's output moves to
// the last one's), in order.
std::vector<Absorbed> absorb_scalar_ops(CompileContext& cx, QOp& op, std::string* out, Affine* h) {
  std::vector<Absorbed> chain;
  while (!cx.g.is_graph_output(*out)) {
    const Node* c = match::single_consumer(cx.g, *out);
    if (!c || !c->domain.empty() || c->inputs.size() != 2 || !cx.layer_allowed(*c) ||
        (c->op_type != "Add" && c->op_type != "Sub" && c->op_type != "Mul" && c->op_type != "Div"))
      break;
    size_t other = c->inputs[0] == *out ? 1 : 0;
    const Tensor* k = match::constant(cx.g, c->inputs[other]);
    if (c->inputs[1 - other] != *out || !k || k->numel() != 1 || k->dtype() != DType::Float32 || k->rank() > 1) break;
    chain.push_back({*c, k, other});
    h->apply(c->op_type, k->get_f64(0), other == 0);
    cx.consumed.insert(c->name);
    op.fused.push_back(c->name);
    *out = c->outputs[0];
    op.node.outputs[0] = *out;
  }
  return chain;
}

}  // namespace

Tensor table_curve(const Node& n, double a1, double a0, const QParams& qx, const QParams& qy, const Tensor& table,
                   int64_t in_lo) {
  Tensor none(DType::Float32, {0});
  if (!n.domain.empty() || (n.op_type != "HardSwish" && n.op_type != "HardSigmoid")) return none;
  bool swish = n.op_type == "HardSwish";
  double alpha = swish ? 1.0 / 6.0 : n.attr_float("alpha", 0.2f), beta = swish ? 0.5 : n.attr_float("beta", 0.5f);
  double sx = qx.scale, zx = static_cast<double>(qx.zero_point), ua = sx * a1 / qy.scale;
  fx::Range ry = fx::range_of(qy.type);
  auto f = [](double v) { return static_cast<float>(v); };
  fx::TableCurve c{f(sx * alpha),
                   f(beta - alpha * sx * zx),
                   swish ? f(ua) : 0.0f,
                   swish ? f(-zx * ua) : f(a1 / qy.scale),
                   f(a0 / qy.scale + static_cast<double>(qy.zero_point)),
                   f(static_cast<double>(ry.lo)),
                   f(static_cast<double>(ry.hi))};
  int64_t size = table.numel();
  if (fx::first_curve_mismatch(c, in_lo, size, [&](int64_t i) { return static_cast<int64_t>(table.get_f64(i)); }) !=
      in_lo + size)
    return none;
  Tensor t(DType::Float32, {fx::TableCurve::kSize});
  c.to_values(t.data<float>());
  return t;
}

// (20): a table over every input code.
bool prepare_lut(CompileContext& cx, QOp& op) {
  const Node n = op.node;  // (absorbing scalar ops renames op's output)
  if (!cx.all_inputs_quantized(n, 1)) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && !cx.g.initializers.count(n.inputs[i])) return false;
  QParams qx = cx.q_of(n.inputs[0]);
  if (qx.bits() > 16) return false;
  fx::Range rx = fx::range_of(qx.type);
  std::string out = n.outputs[0];
  Affine h;
  std::vector<Absorbed> chain = absorb_scalar_ops(cx, op, &out, &h);
  if (chain.empty() && kNonNegativeOps.count(n.op_type)) cx.nonneg.insert(out);
  double lo, hi;
  if (chain.empty() && (n.op_type == "Clip") && match::clip_bounds(cx.g, n, &lo, &hi) && lo >= 0) cx.nonneg.insert(out);
  // A QAT Clip keeps its range; a Relu/Clip on the same scale maps codes to themselves.
  QParams qy = activation_qparams(cx, out, out_bits(cx, op, out));
  cx.set_q(out, qy);
  // The function's float values at every input code: f, then the absorbed ops, each evaluated
  // by its float kernel.
  auto values = [&]() {
    Tensor x(DType::Float32, {rx.hi - rx.lo + 1});
    for (int64_t q = rx.lo; q <= rx.hi; ++q) x.data<float>()[q - rx.lo] = fx::dequantize(q, qx.scale, qx.zero_point);
    Node fnode = n;
    fnode.outputs.resize(1);
    std::vector<const Tensor*> ins = {&x};
    for (size_t i = 1; i < n.inputs.size(); ++i)
      ins.push_back(n.inputs[i].empty() ? nullptr : &cx.g.initializers.at(n.inputs[i]));
    Tensor fy = run_node(fnode, ins).at(0);
    for (const Absorbed& a : chain) {
      std::vector<const Tensor*> ains(2);
      ains[1 - a.other] = &fy;
      ains[a.other] = a.k;
      fy = run_node(a.node, ains).at(0);
    }
    return fy;
  };
  struct Made {
    Tensor table, curve;
  };
  std::string key = cat("table|", n.name, '|', out, '|', PreparedCache::key_of(qx), '|', PreparedCache::key_of(qy));
  auto made = prepared_value<Made>(cx.prepared.get(), key, [&]() {
    Tensor fy = values();
    fx::Range ry = fx::range_of(qy.type);
    Tensor table(qy.type, {fy.numel()});  // output codes: 64 KB for a 16-bit input and 8-bit output
    for (int64_t i = 0; i < fy.numel(); ++i)
      table.set_f64(i, static_cast<double>(fx::quantize(fy.get_f64(i), qy.scale, qy.zero_point, ry)));
    return Made{table, h.ok ? table_curve(n, h.a1, h.a0, qx, qy, table, rx.lo) : Tensor(DType::Float32, {0})};
  });
  op.params = params::Table{made->table, rx.lo, made->curve};
  op.node.inputs.resize(1);
  return true;
}

}  // namespace fixpoint
