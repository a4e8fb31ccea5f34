// Imported QDQ models: QuantizeLinear(x, s, z) -> DequantizeLinear(., s, z) pairs fix a
// tensor's encoding. The pair is removed (readers of the DequantizeLinear output read x) and the
// encoding recorded, so the compiler gives x exactly that scale, zero point and width
// (docs/arithmetic.md §2.6). DequantizeLinear of a constant integer weight records the weight's
// scales before constant folding turns it into a float initializer.
#include "fixpoint/graph_match.h"
#include "fixpoint/passes.h"

namespace fixpoint {
namespace {

// One-element scale / zero point constants (per-tensor): false otherwise.
bool per_tensor(const Graph& g, const Node& n, double* scale, int64_t* zp, DType* type) {
  const Tensor* s = n.inputs.size() > 1 ? match::constant(g, n.inputs[1]) : nullptr;
  const Tensor* z = n.inputs.size() > 2 && !n.inputs[2].empty() ? match::constant(g, n.inputs[2]) : nullptr;
  if (!s || s->numel() != 1 || !dtype_is_float(s->dtype())) return false;
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && (!z || z->numel() != 1)) return false;
  *scale = s->get_f64(0);
  *zp = z ? static_cast<int64_t>(z->get_f64(0)) : 0;
  *type = z ? z->dtype() : DType::UInt8;  // ONNX: no zero point means uint8, zero point 0
  return *scale > 0 && (*type == DType::UInt8 || *type == DType::Int8 || *type == DType::UInt16 || *type == DType::Int16);
}

}  // namespace

std::map<std::string, QdqParams::Weight> qdq_weights(const Graph& g) {
  std::map<std::string, QdqParams::Weight> r;
  for (const auto& n : g.nodes) {
    if (n.op_type != "DequantizeLinear" || !n.domain.empty() || n.inputs.size() < 2) continue;
    const Tensor* w = match::constant(g, n.inputs[0]);
    const Tensor* s = match::constant(g, n.inputs[1]);
    if (!w || !s || dtype_is_float(w->dtype()) || !dtype_is_float(s->dtype())) continue;
    const Tensor* z = n.inputs.size() > 2 && !n.inputs[2].empty() ? match::constant(g, n.inputs[2]) : nullptr;
    bool symmetric = true;
    for (int64_t i = 0; z && i < z->numel(); ++i) symmetric = symmetric && z->get_f64(i) == 0;
    if (!symmetric) continue;  // asymmetric weights: requantized symmetrically by the compiler
    QdqParams::Weight wq;
    for (int64_t i = 0; i < s->numel(); ++i) wq.scales.push_back(s->get_f64(i));
    int64_t axis = n.attr_int("axis", 1);
    wq.axis = axis < 0 ? axis + w->rank() : axis;
    wq.type = w->dtype();
    r[n.outputs[0]] = wq;
  }
  return r;
}

std::map<std::string, QdqParams::Activation> fold_qdq_pairs(Graph& g, PassLog& log) {
  std::map<std::string, QdqParams::Activation> r;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& d = g.nodes[i];
    if (d.op_type != "DequantizeLinear" || !d.domain.empty()) continue;
    const Node* q = match::producer(g, d.inputs[0]);
    if (!q || q->op_type != "QuantizeLinear" || !q->domain.empty()) continue;
    double sq, sd;
    int64_t zq, zd;
    DType tq, td;
    if (!per_tensor(g, *q, &sq, &zq, &tq) || !per_tensor(g, d, &sd, &zd, &td) || sq != sd || zq != zd || tq != td) continue;
    std::string x = q->inputs[0], y = d.outputs[0], qname = q->name, dname = d.name, t = x;
    if (g.is_graph_output(y)) {
      // y's name must survive: x's producer writes y instead (x itself must be an inner tensor).
      bool x_inner = match::producer(g, x) && !g.is_graph_output(x);
      for (const auto& in : g.inputs) x_inner = x_inner && in.name != x;
      if (!x_inner) continue;
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));  // the only writer of y
      for (auto& n : g.nodes) {
        for (auto& o : n.outputs) o = o == x ? y : o;
        for (auto& in : n.inputs) in = in == x ? y : in;
      }
      auto vi = g.value_info.find(x);
      if (vi != g.value_info.end()) {
        ValueInfo v = vi->second;
        v.name = y;
        g.value_info.erase(vi);
        g.value_info[y] = v;
      }
      t = y;
    } else {
      for (auto& n : g.nodes)
        for (auto& in : n.inputs) in = in == y ? x : in;
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
      g.value_info.erase(y);
    }
    r[t] = {sq, zq, tq};  // the QuantizeLinear, now unread, goes with dead node elimination
    log.add(cat("QuantizeLinear '", qname, "' + DequantizeLinear '", dname, "' folded: tensor '", t, "' keeps scale ", sq,
                ", zero point ", zq, " (", dtype_name(tq), ")"),
            {qname, dname});
    --i;
  }
  return r;
}

}  // namespace fixpoint
