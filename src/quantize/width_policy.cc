// Width policy (docs/arithmetic.md §2.7): which width each layer computes at (--bits, --bits16,
// --bits8, --params16, --params8), which tensors of 8-bit layers stay 16-bit inside fused kernels, and
// which 8-bit layers store their outputs at 16 bits (--out16).
#include "quantize/width_policy.h"

#include <algorithm>

#include "fixpoint/graph_match.h"

namespace fixpoint {
namespace {

// n runs on the accelerator as a layer of `bits`.
bool on_acc(const CompileContext& cx, const Node& n, int bits) {
  return n.domain.empty() && cx.layer_allowed(n) && layer_bits(cx, n) == bits;
}
bool on_acc8(const CompileContext& cx, const Node& n) { return on_acc(cx, n, 8); }

// t may be stored wider than its layer: an activation inside the graph whose width no QDQ pair
// fixes (an imported QDQ model's own encodings win, §2.6).
bool widenable(const CompileContext& cx, const std::string& t) {
  return !cx.g.is_graph_output(t) && is_float_activation(cx.g, t) && !cx.qdq.activations.count(t);
}

}  // namespace

// §2.7 Fused intermediates. A tensor is produced and read inside one fused kernel, so it never
// reaches memory, when its producer is a Conv/Gemm/MatMul with constant weights (with its
// fused Relu/Clip) or an elementwise op, and every reader is an elementwise op (Add, Sub, Mul,
// Div or a table), all 8-bit layers on the accelerator. Such tensors keep 16 bits: x + r(x^2 - x)
// evaluated step by step in registers, a Conv's result fed to its Tanh, two Convs' partial sums
// added. A tensor handed to a float CPU op keeps 16 bits too: the CPU dequantizes it at once,
// and an 8-bit handoff would add a rounding float never has. Tensors that cross memory
// between accelerator layers (read by a Conv, Concat, pool, reshape...) stay 8-bit.
void find_fused_intermediates(CompileContext& cx) {
  std::map<std::string, std::vector<const Node*>> readers;
  for (const auto& n : cx.g.nodes)
    for (const auto& in : n.inputs)
      if (!in.empty()) readers[in].push_back(&n);
  auto producers = cx.g.producers();
  auto elementwise_op = [&](const Node& n) {
    bool binary = (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div") &&
                  n.inputs.size() == 2;
    return n.domain.empty() && cx.layer_allowed(n) && (binary || kLutOps.count(n.op_type));
  };
  auto elementwise = [&](const Node& n) { return on_acc8(cx, n) && elementwise_op(n); };
  // Readers may be 16-bit layers (--bits16): promoting the Add that joins two Convs must not narrow
  // the sums it reads to 8 bits (measured on Zero-DCE: 43.1 -> 39.0 dB output SNR).
  auto weighted = [&](const Node& n) {
    bool mm = n.op_type == "Conv" || n.op_type == "ConvTranspose" || n.op_type == "Gemm" || n.op_type == "MatMul";
    return on_acc8(cx, n) && mm && n.inputs.size() >= 2 && cx.g.initializers.count(n.inputs[1]);
  };
  for (const auto& [t, index] : producers) {
    if (!widenable(cx, t)) continue;
    auto r = readers.find(t);
    if (r == readers.end()) continue;
    const Node* p = &cx.g.nodes[index];
    const Node* src = p;
    if ((p->op_type == "Relu" || p->op_type == "Clip") && producers.count(p->inputs[0]) &&
        match::single_consumer(cx.g, p->inputs[0]) == p)
      src = &cx.g.nodes[producers.at(p->inputs[0])];  // a Relu/Clip the Conv fuses
    if (!weighted(*src) && !elementwise(*p)) continue;
    if (std::all_of(r->second.begin(), r->second.end(),
                    [&](const Node* c) { return elementwise_op(*c) || !cx.layer_allowed(*c); }))
      cx.fused_intermediates.insert(t);
  }
}

// §2.7 Residual stream. A pre-norm transformer (ViT, Swin, SVTR) carries its tokens in one tensor
// from Add to Add, and each block reads it through a LayerNormalization, which rescales every
// token (row) to unit variance. Rows differ in magnitude (ViT's class token, 35x smaller than
// the patch tokens with which it shares a per-tensor scale, keeps +-1 code at 8 bits), and the
// normalization turns a row's few codes into full-size noise that the stream then carries to the
// head. So the stream is stored one width up: every Add/Sub output a LayerNormalization reads, and
// the Concat output such an Add reads (where a class token joins the patches). Elementwise
// layers and data movement only: the Conv/MatMul layers read the normalized tokens.
// 8-bit programs store it at 16 bits. 16-bit programs at 32 (the class token row keeps ~50 dB at
// 16 bits, docs/accuracy.md), where every reader is an Add/Sub or a LayerNormalization: the
// kernels that read 32-bit codes ((16)-(17) in int128, (26b)); any other reader keeps 16 bits.
void find_residual_stream(CompileContext& cx) {
  const int bits = cx.opts.bits;
  if (bits != 8 && bits != 16) return;
  std::map<std::string, std::vector<const Node*>> readers;
  for (const auto& n : cx.g.nodes)
    for (const auto& in : n.inputs)
      if (!in.empty()) readers[in].push_back(&n);
  auto reads32 = [&](const std::string& t) {
    for (const Node* r : readers[t])
      if (!(r->domain.empty() && (r->op_type == "Add" || r->op_type == "Sub" || r->op_type == "LayerNormalization")))
        return false;
    return true;
  };
  auto producers = cx.g.producers();
  auto produced_by = [&](const std::string& t, std::initializer_list<const char*> types) -> const Node* {
    auto p = producers.find(t);
    if (p == producers.end() || !widenable(cx, t) || (bits == 16 && !reads32(t))) return nullptr;
    const Node& n = cx.g.nodes[p->second];
    for (const char* ty : types)
      if (n.op_type == ty && on_acc(cx, n, bits)) return &n;
    return nullptr;
  };
  for (const auto& ln : cx.g.nodes) {
    if (ln.op_type != "LayerNormalization" || !ln.domain.empty() || !cx.layer_allowed(ln) || ln.inputs.empty()) continue;
    const Node* add = produced_by(ln.inputs[0], {"Add", "Sub"});
    if (!add) continue;
    cx.residual_stream.insert(ln.inputs[0]);
    for (const auto& in : add->inputs)
      if (produced_by(in, {"Concat"})) cx.residual_stream.insert(in);
  }
}

// §2.7 Softmax over long rows. The output's 8-bit step is 1/255 of the whole [0, 1], so where a
// row spreads over N entries (attention over N tokens), a typical probability 1/N keeps 255/N
// codes: fewer than 16 (4 bits) once N > 16, and about 1 for ViT-B/16's 197 tokens (the own SNR
// of each Softmax is then 14 dB). Such outputs are stored at 16 bits; the Softmax itself reads
// its 8-bit input as before.
constexpr int64_t kSoftmaxRow8 = 16;

bool long_softmax(const CompileContext& cx, const Node& n) {
  if (n.op_type != "Softmax" || !n.domain.empty() || n.inputs.empty()) return false;
  const ValueInfo* vi = cx.g.info(n.inputs[0]);
  if (!vi || !vi->shape_known()) return false;
  const Shape s = vi->static_shape();
  const auto r = static_cast<int64_t>(s.size());
  int64_t axis = n.attr_int("axis", n.opset < 13 ? 1 : -1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return false;
  int64_t row = s[static_cast<size_t>(axis)];
  if (n.opset < 13)  // the input coerced to 2-D at axis: a row is every dim from axis on
    for (int64_t d = axis + 1; d < r; ++d) row *= s[static_cast<size_t>(d)];
  return row > kSoftmaxRow8;
}

// The width a layer's output is stored at: the layer's, or one width up (§2.7).
int qdq_bits(const CompileContext& cx, const std::string& t, int bits) {
  auto qd = cx.qdq.activations.find(t);
  return bits == 8 && qd != cx.qdq.activations.end() && dtype_size(qd->second.type) == 2 ? 16 : bits;
}

int out_bits(const CompileContext& cx, const QOp& op, const std::string& out) {
  if (op.bits == 8 && qdq_bits(cx, out, 8) == 16) return 16;
  if (op.bits == 8 && layer_matches_any(cx.opts.out16, op.node)) return 16;  // --out16
  if (op.bits == 8 && cx.opts.bits == 8 && cx.opts.wide_softmax && !cx.qdq.activations.count(out) &&
      long_softmax(cx, op.node))
    return 16;  // a QDQ model's own 8-bit pair wins (§2.6)
  if (op.bits == 16 && cx.opts.bits == 16 && cx.residual_stream.count(out)) return 32;  // §2.7
  return op.bits == 8 && (cx.fused_intermediates.count(out) || cx.residual_stream.count(out)) ? 16 : op.bits;
}

int layer_bits(const CompileContext& cx, const Node& n) {
  if (layer_matches_any(cx.opts.bits16, n)) return 16;
  if (cx.opts.bits == 16 && layer_matches_any(cx.opts.bits8, n)) return 8;
  return cx.opts.bits;
}

bool params16(const CompileContext& cx, const Node& n) {
  if (layer_matches_any(cx.opts.params16, n)) return true;
  return layer_bits(cx, n) == 16 && !layer_matches_any(cx.opts.params8, n);
}

}  // namespace fixpoint
