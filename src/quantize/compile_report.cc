// The compile report: compile_report.json for tools, compile_report.txt for people
// (docs/arithmetic.md, docs/partitioning.md).
#include "quantize/compile_report.h"

#include <sstream>

namespace fixpoint {
namespace {

using json = nlohmann::json;

// Tensors of the imported graph the program never computes, each with the program tensor that
// stands for it: the output of the op its producer was fused or rewritten into.
json removed_tensors(const CompileContext& cx) {
  std::map<std::string, std::string> stand_in;  // ONNX node -> program tensor
  for (const auto& op : cx.prog.ops) {
    if (op.node.outputs.empty()) continue;
    std::string out = op.node.outputs[0];
    stand_in[op.node.name] = out;
    for (const auto& f : op.fused) stand_in[f] = out;
  }
  for (const auto& e : cx.rewrite_entries) {  // nodes a rewrite merged: the survivor's output
    std::string out;
    for (const auto& n : e["nodes"])
      if (stand_in.count(n.get<std::string>())) out = stand_in[n.get<std::string>()];
    for (const auto& n : e["nodes"])
      if (!out.empty() && !stand_in.count(n.get<std::string>())) stand_in[n.get<std::string>()] = out;
  }
  json r = json::object();
  for (const auto& n : cx.before_rewrites.nodes)
    for (const auto& t : n.outputs) {
      if (t.empty() || cx.prog.tensors.count(t) || cx.g.is_graph_output(t)) continue;
      auto it = stand_in.find(n.name);
      r[t] = {{"node", n.name}, {"op", n.op_type}, {"stand_in", it == stand_in.end() ? json() : json(it->second)}};
    }
  return r;
}

}  // namespace

CompileResult finish(CompileContext& cx) {
  CompileResult r;
  json rep;
  rep["model"] = cx.prog.source_model;
  rep["bits"] = cx.prog.bits;
  rep["scale_mode"] = cx.prog.scale_mode;
  rep["weight_scales"] = cx.opts.per_tensor_weights ? "per tensor" : "per output channel";
  rep["rounding"] = cx.prog.rounding;
  rep["calib_method"] = cx.opts.bits == 32 ? "none"
                        : cx.stats.empty() ? (cx.opts.qat ? "qat" : cx.qdq.activations.empty() ? "none" : "qdq")
                                         : cx.opts.calib_method;
  if (rep["calib_method"] == "percentile") rep["calib_percentile"] = cx.opts.calib_percentile;
  rep["qdq_tensors"] = cx.qdq.activations.size();
  rep["rewrites"] = cx.rewrite_entries;
  if (!cx.adaptive_rounding.is_null()) rep["adaptive_rounding"] = cx.adaptive_rounding;
  if (!cx.prog.channel_factors.empty()) rep["channel_factors"] = cx.prog.channel_factors;  // (7d): program = model x factor
  json layers = json::array(), fallback = json::array();
  std::ostringstream txt;
  int n_float = 0;
  for (const auto& op : cx.prog.ops) {
    json l = {{"name", op.node.name}, {"op", op.node.op_type}, {"kind", std::string(op.kind())}, {"bits", op.bits},
              {"fused", op.fused}};
    if (const params::Weighted* w = weighted_params(op.params)) l["weight_bits"] = w->weight_bits;
    json ins = json::array(), outs = json::array();
    for (const auto& in : op.node.inputs) {
      if (in.empty() || cx.prog.float_constants.count(in)) continue;
      QParams q = cx.q_of(in);
      ins.push_back({{"tensor", in}, {"dtype", dtype_name(q.type)}, {"scale", q.scale}});
    }
    for (const auto& o : op.node.outputs) {
      if (o.empty()) continue;
      QParams q = cx.q_of(o);
      json oj = {{"tensor", o}, {"dtype", dtype_name(q.type)}, {"scale", q.scale}};
      auto s = cx.stats.find(o);
      if (s != cx.stats.end() && s->second.seen()) oj["range"] = {s->second.lo, s->second.hi};
      if (const ValueInfo* vi = cx.g.info(o); vi && vi->shape) oj["shape"] = vi->shape_text();
      outs.push_back(oj);
    }
    l["inputs"] = ins;
    l["outputs"] = outs;
    if (op.is<params::Float>()) {
      l["reason"] = op.reason;
      if (cx.opts.bits != 32) {
        fallback.push_back({{"name", op.node.name}, {"op", op.node.op_type}, {"reason", op.reason}});
        ++n_float;
      }
    }
    layers.push_back(l);
  }
  rep["layers"] = layers;
  rep["fallback_nodes"] = fallback;
  // Subgraphs of the program as it runs (after fusion): fused nodes belong to their op's group.
  std::vector<std::vector<std::string>> ins, outs, members;
  std::vector<bool> acc;
  for (const auto& op : cx.prog.ops) {
    ins.push_back(op.node.inputs);
    outs.push_back(op.node.outputs);
    std::vector<std::string> m = {op.node.name};
    m.insert(m.end(), op.fused.begin(), op.fused.end());
    members.push_back(m);
    acc.push_back(!op.is<params::Float>());
  }
  json subgraphs = json::array();
  int n_acc = 0, n_cpu = 0;
  for (const auto& sg : group_subgraphs(ins, outs, acc, members)) {
    subgraphs.push_back({{"id", sg.id}, {"kind", sg.kind}, {"nodes", sg.nodes}});
    (sg.kind == "accelerator" ? n_acc : n_cpu)++;
  }
  int boundary = count_boundary_tensors(ins, outs, acc);
  rep["subgraphs"] = subgraphs;
  rep["removed_tensors"] = removed_tensors(cx);
  // §2.7: which tensors of 8-bit layers stay 16-bit inside fused kernels (only those quantized).
  json fused_wide = json::array();
  for (const auto& t : cx.fused_intermediates)
    if (cx.prog.tensors.count(t) && cx.prog.tensors.at(t).bits() == 16) fused_wide.push_back(t);
  rep["fused_intermediates_16bit"] = fused_wide;
  for (int bits : {16, 32}) {  // §2.7: 16 in 8-bit programs, 32 in 16-bit ones
    json stream = json::array();
    for (const auto& t : cx.residual_stream)
      if (cx.prog.tensors.count(t) && cx.prog.tensors.at(t).bits() == bits) stream.push_back(t);
    rep["residual_stream_" + std::to_string(bits) + "bit"] = stream;
  }
  rep["subgraph_counts"] = {{"accelerator", n_acc}, {"cpu", n_cpu}, {"boundary_tensors", boundary}};
  rep["precision_warnings"] = cx.precision_warnings;
  rep["calibration_nonfinite"] = {{"input_nan", cx.calib_nonfinite.inputs.nan}, {"input_inf", cx.calib_nonfinite.inputs.inf},
                                  {"tensor_nan", cx.calib_nonfinite.tensors.nan}, {"tensor_inf", cx.calib_nonfinite.tensors.inf}};
  txt << "fixpoint compile report\n  model: " << cx.prog.source_model << "\n  bits: " << cx.prog.bits
      << "   scale mode: " << cx.prog.scale_mode << "   rounding: half up (docs/arithmetic.md (2))\n  ops: "
      << cx.prog.ops.size() << " (" << (cx.prog.ops.size() - n_float) << " fixed point, " << n_float
      << " float on the CPU)\n  subgraphs: " << n_acc << " accelerator, " << n_cpu << " cpu; " << boundary
      << " tensor(s) cross between them\n";
  if (!fused_wide.empty())
    txt << "  " << fused_wide.size()
        << " tensor(s) of 8-bit layers kept at 16 bits inside fused kernels (docs/arithmetic.md 2.7; "
           "--narrow-intermediates stores them at 8)\n";
  if (cx.calib_nonfinite.inputs.total() + cx.calib_nonfinite.tensors.total())
    txt << "  calibration met " << cx.calib_nonfinite.inputs.text() << " in its samples and "
        << cx.calib_nonfinite.tensors.text() << " in computed tensors; ranges ignore them (docs/arithmetic.md 2.8)\n";
  if (!cx.precision_warnings.empty()) {
    txt << "\nprecision warnings (the integer result cannot match float here):\n";
    for (const auto& w : cx.precision_warnings)
      txt << "  " << w["layer"].get<std::string>() << ": " << w["detail"].get<std::string>() << "\n";
  }
  if (n_float) {
    txt << "\nfallback nodes (run on the CPU in float, between dequantize and quantize):\n";
    for (const auto& f : fallback)
      txt << "  " << f["name"].get<std::string>() << " (" << f["op"].get<std::string>() << "): " << f["reason"].get<std::string>() << "\n";
  }
  txt << "\nsubgraphs:\n";
  for (const auto& sg : subgraphs) {
    const auto& nodes = sg["nodes"];
    txt << "  #" << sg["id"].get<int>() << " " << sg["kind"].get<std::string>() << ": " << nodes.size() << " node(s), "
        << nodes.front().get<std::string>() << (nodes.size() > 1 ? " .. " + nodes.back().get<std::string>() : "") << "\n";
  }
  if (!cx.rewrites.empty()) {
    txt << "\nrewrites:\n";
    for (const auto& w : cx.rewrites) txt << "  " << w << "\n";
  }
  txt << "\nlayers:\n";
  for (const auto& l : layers) {
    txt << "  " << l["name"].get<std::string>() << "  " << l["op"].get<std::string>() << "  [" << l["kind"].get<std::string>()
        << ", " << l["bits"].get<int>() << "-bit";
    if (l.contains("weight_bits") && l["weight_bits"].get<int>() != l["bits"].get<int>())
      txt << ", " << l["weight_bits"].get<int>() << "-bit weights";
    txt << "]";
    for (const auto& f : l["fused"]) txt << " +" << f.get<std::string>();
    for (const auto& o : l["outputs"])
      txt << "  -> " << o["tensor"].get<std::string>() << " " << o["dtype"].get<std::string>() << " scale "
          << o["scale"].get<double>();
    txt << "\n";
  }
  r.report = rep;
  r.report_text = txt.str();
  r.program = std::move(cx.prog);
  return r;
}

}  // namespace fixpoint
