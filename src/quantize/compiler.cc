// The fixed-point compiler's pipeline (docs/architecture.md, "The compiler"): import and
// simplify, partition, calibrate, choose widths and encodings, prepare every op the accelerator
// runs through its kind's prepare step (src/quantize/prepare/), and report. Ops without an
// integer kernel stay float ("float" kind, CPU fallback) and are listed in the report.
#include "fixpoint/compiler.h"

#include <algorithm>
#include <functional>
#include <mutex>
#include <set>

#include "fixpoint/model.h"
#include "quantize/adaptive_rounding.h"
#include "quantize/bias_correction.h"
#include "quantize/calibration_stats.h"
#include "quantize/channel_equalization.h"
#include "quantize/compile_context.h"
#include "quantize/compile_report.h"
#include "quantize/encoding.h"
#include "quantize/prepare/prepare.h"
#include "quantize/qat_ranges.h"
#include "quantize/sign_analysis.h"
#include "quantize/width_policy.h"

namespace fixpoint {
namespace {

// The first prepare step registered for op's type that takes it; else the CPU runs it in float.
void choose_kind(CompileContext& cx, QOp& op) {
  if (!kMoveOps.count(op.node.op_type))  // (data movement passes its input's codes on)
    for (const auto& o : op.node.outputs)
      if (!o.empty() && qdq_leaves_float(cx, o)) {
        to_float(op, cat("QDQ model: no QuantizeLinear/DequantizeLinear pair covers output '", o,
                         "', so it stays float as in ONNX Runtime"));
        return;
      }
  for (PrepareFn prepare : prepare_steps(op.node.op_type))
    if (prepare(cx, op)) return;
  // The capability table said yes, but an operand has no quantization (a tensor calibration
  // never reached, or an operand a CPU node left in float).
  to_float(op, "unsupported attribute: an operand has no fixed-point encoding (not reached by calibration?)");
}

// The artifact keeps only the constants some op still reads (float fallback ops, shape
// operands of data movement, graph outputs): an integer op's weights live in its prepared
// constants, so their float originals would only double the file.
void drop_unread_constants(CompileContext& cx) {
  std::set<std::string> read;
  for (const auto& op : cx.prog.ops) read.insert(op.node.inputs.begin(), op.node.inputs.end());
  for (auto it = cx.prog.float_constants.begin(); it != cx.prog.float_constants.end();)
    it = read.count(it->first) || cx.g.is_graph_output(it->first) ? std::next(it) : cx.prog.float_constants.erase(it);
}

// Whether a node the accelerator runs reads t (then a CPU result must be quantized).
bool read_by_accelerator(const CompileContext& cx, const std::string& t) {
  for (const auto& n : cx.g.nodes)
    if (cx.layer_allowed(n) && std::find(n.inputs.begin(), n.inputs.end(), t) != n.inputs.end()) return true;
  return false;
}

void plan_float(CompileContext& cx, QOp& op) {
  // Outputs of a float fallback op are quantized at the op's width so integer consumers work.
  for (const auto& o : op.node.outputs) {
    if (o.empty()) continue;
    if (cx.opts.bits == 32 || !is_float_activation(cx.g, o) || !read_by_accelerator(cx, o) || qdq_leaves_float(cx, o)) {
      cx.set_q(o, QParams{});
      continue;
    }
    auto s = cx.stats.find(o);
    if ((s == cx.stats.end() || !s->second.seen()) && !cx.qat_ranges.count(o) && !cx.qdq.activations.count(o)) {
      cx.set_q(o, QParams{});  // never reached during calibration (e.g. shape tensors): stays float
      continue;
    }
    cx.set_q(o, activation_qparams(cx, o, op.bits == 32 ? 8 : op.bits));
  }
}


// Every node becomes an op: prepared for the accelerator, or float on the CPU.
void plan(CompileContext& cx) {
  // Graph inputs: quantized at the default width.
  for (const auto& in : cx.g.inputs) {
    if (in.dtype != DType::Float32) continue;
    cx.set_q(in.name, qdq_leaves_float(cx, in.name) ? QParams{}
                                                   : activation_qparams(cx, in.name, qdq_bits(cx, in.name, cx.opts.bits)));
  }
  for (const auto& n : cx.g.nodes) {
    if (cx.consumed.count(n.name)) continue;
    QOp op;
    op.node = n;
    op.bits = cx.opts.bits == 32 ? 32 : layer_bits(cx, n);
    if (cx.opts.bits == 32) {
      op.params = params::Float{};
      op.reason = "float reference (--bits 32)";
    } else if (!cx.layer_allowed(n)) {
      to_float(op, cx.part.cpu_reason.at(n.name));
    } else {
      choose_kind(cx, op);
    }
    if (op.is<params::Float>()) plan_float(cx, op);
    track_nonnegative(cx, op);
    cx.prog.ops.push_back(std::move(op));
  }
  for (const auto& [name, t] : cx.g.initializers) cx.prog.float_constants[name] = t;
}

using Importer = std::function<Graph(const ImportOptions&)>;

// Every name or glob of a layer list must match something: a typo in --bits16 would otherwise
// compile the layer at 8 bits without a word. An entry may match a node of the model as imported
// (names the user sees in Netron) or of the rewritten graph (names --auto-mixed and reports give).
// op:TYPE entries are type filters and may match nothing (TIDL configs deny "MaxPool, Tanh" for
// every model of a project).
void check_layer_lists(const CompileOptions& opts, const std::vector<Node>& source, const std::vector<Node>& rewritten) {
  const std::pair<const char*, const std::vector<std::string>*> lists[] = {
      {"--bits16", &opts.bits16}, {"--bits8", &opts.bits8}, {"--params16", &opts.params16},
      {"--params8", &opts.params8},   {"--out16", &opts.out16},   {"--deny", &opts.deny},   {"--allow", &opts.allow}};
  auto any = [](const std::vector<Node>& nodes, const std::string& p) {
    return std::any_of(nodes.begin(), nodes.end(), [&](const Node& n) { return layer_matches(p, n); });
  };
  for (const auto& [option, patterns] : lists)
    for (const auto& p : *patterns)
      FP_CHECK(p.rfind("op:", 0) == 0 || any(source, p) || any(rewritten, p), option, " '", p, "' matches no node of the model (give node names, "
               "output tensor names, globs such as 'conv*' or op:TYPE; `fixpoint inspect` lists them)");
}

void check_options(const CompileOptions& opts) {
  FP_CHECK(opts.bits == 8 || opts.bits == 16 || opts.bits == 32, "--bits must be 8, 16 or 32, got ", opts.bits);
  FP_CHECK(opts.scale_mode == "float" || opts.scale_mode == "pow2", "--scale-mode must be float or pow2, got '",
           opts.scale_mode, "'");
  FP_CHECK(opts.calib_method != "entropy",
           "--calib-method 'entropy' was removed: KL calibration clipped the long tails of HardSwish outputs to "
           "1/30 of their range (PaddleOCR recognizer int8: 0% character accuracy, docs/accuracy.md); use percentile "
           "(default) or mse");
  FP_CHECK(opts.calib_method == "minmax" || opts.calib_method == "percentile" || opts.calib_method == "mse",
           "--calib-method '", opts.calib_method, "' is unknown (percentile, minmax, mse)");
  FP_CHECK(opts.calib_percentile > 50 && opts.calib_percentile <= 100, "--calib-percentile must be in (50, 100], got ",
           opts.calib_percentile);
  FP_CHECK(opts.calib_percentile == kDefaultCalibPercentile || opts.calib_method == "percentile", "--calib-percentile ",
           opts.calib_percentile, " applies to --calib-method percentile, not ", opts.calib_method);
}

// What build_graph reads of the options (and whether there are calibration samples): compiles
// that agree on it start from the same CompileState (ModelCompiler).
std::string graph_options_key(const CompileOptions& opts, const CalibrationSource* calib) {
  std::string k = cat(opts.bits, opts.wide_intermediates ? "w" : "n", calib && calib->size() ? "c" : "-");
  for (const auto* list : {&opts.disabled_passes, &opts.deny, &opts.allow}) {
    k += '|';
    for (const auto& e : *list) k += e + '\n';
  }
  return k;
}

// Reads a model with `import` (given ImportOptions) and runs the steps before calibration that
// depend only on graph_options_key: the graph calibration measures (after the compile-time
// passes) and the partition.
void build_graph(CompileContext& cx, const Importer& import, const std::string& origin, const CalibrationSource* calib) {
  const CompileOptions& opts = cx.opts;
  if (calib && calib->size()) {
    // A stacked file may also be a plain batch [N, C, H, W] for a model input [1, C, H, W]:
    // then each sample gets its batch dim of 1 back.
    Graph probe = import(ImportOptions{{}, false});
    for (const auto& [name, t] : calib->sample(0)) {
      auto it = std::find_if(probe.inputs.begin(), probe.inputs.end(), [&](const ValueInfo& v) { return v.name == name; });
      FP_CHECK(it != probe.inputs.end(), "--calib ", name, ": the model has no input named '", name, "'");
    }
    cx.model_inputs = probe.inputs;
    // Calibration shapes are not bound into the graph: the program keeps the model's dynamic
    // dims (any batch size runs). --shape binds them when the model needs static shapes.
  }
  PipelineOptions po;
  po.before_passes = [&cx](Graph& g) { cx.qdq.weights = qdq_weights(g); };
  ImportOptions io;
  io.shapes = opts.shapes;
  Graph imported = import(io);
  cx.source_nodes = imported.nodes;
  cx.g = simplify_model(std::move(imported), po);
  PassLog qlog;
  cx.qdq.activations = fold_qdq_pairs(cx.g, qlog);
  for (const auto& e : qlog.entries) cx.log_rewrite("fold_qdq", e.detail, e.nodes);
  for (const auto& n : cx.g.nodes)
    if (n.op_type == "Softmax" || n.op_type == "Sigmoid" || n.op_type == "HardSigmoid" || n.op_type == "Tanh")
      cx.bounded.insert(n.outputs[0]);
  cx.before_rewrites = cx.g;  // (tensor storage is shared: a cheap copy)
  // split_concat_conv pays only where its partial sums stay 16-bit inside the fused Add (§2.7):
  // a 16-bit program would round each partial sum to 16 bits, more error than its Concat's.
  std::vector<std::string> disabled = opts.disabled_passes;
  if ((opts.bits != 8 || !opts.wide_intermediates) &&
      std::find(disabled.begin(), disabled.end(), "split_concat_conv") == disabled.end())
    disabled.push_back("split_concat_conv");
  PassLog plog = PassManager::compile_time(disabled).run(cx.g);
  for (const auto& l : plog.lines) cx.rewrites.push_back(l);
  for (const auto& e : plog.entries)
    cx.rewrite_entries.push_back({{"pass", e.pass}, {"detail", e.detail}, {"nodes", e.nodes}});
  cx.part = partition_graph(cx.g, PartitionOptions{opts.deny, opts.allow});
  cx.prog.source_model = origin;
}

// The steps before calibration that read the layer lists and widths.
void finish_context(CompileContext& cx) {
  const CompileOptions& opts = cx.opts;
  check_layer_lists(opts, cx.source_nodes, cx.g.nodes);
  if (opts.bits == 8 && opts.wide_intermediates) find_fused_intermediates(cx);
  if (opts.wide_stream && (opts.bits == 16 || opts.wide_intermediates)) find_residual_stream(cx);
  cx.prog.scale_mode = opts.scale_mode;
  cx.prog.bits = opts.bits;
  cx.prog.inputs = cx.g.inputs;
  cx.prog.outputs = cx.g.outputs;
  for (auto& o : cx.prog.outputs) o.dtype = DType::Float32;
}

void build_context(CompileContext& cx, const Importer& import, const std::string& origin, const CalibrationSource* calib) {
  check_options(cx.opts);
  build_graph(cx, import, origin, calib);
  finish_context(cx);
}

// The name of what calibration measures: the graph before channel equalization rewrites its
// weights, and whether it does (the statistics are then in the equalized graph's units).
std::string calibration_fingerprint(const CompileContext& cx) {
  return graph_fingerprint(cx.g) + (equalization_applies(cx) ? "+equalized" : "");
}

// What calibration measured in cx, as a value.
CalibrationCache calibration_value(const CompileContext& cx, const std::string& fingerprint, size_t samples,
                                   bool histograms) {
  CalibrationCache c;
  c.filled = true;
  c.method = cx.opts.calib_method;
  c.fingerprint = fingerprint;
  c.histograms = histograms;
  c.samples = samples;
  c.input_nonfinite = cx.calib_nonfinite.inputs;
  c.tensor_nonfinite = cx.calib_nonfinite.tensors;
  c.stats = cx.stats;
  c.hist = cx.hist;
  c.channels = cx.channels;
  c.channel_ranges = cx.channel_ranges;
  c.equalized = cx.stats_equalized;
  return c;
}

// The steps of a compile after build_context.
CompileResult compile_context(CompileContext& cx, const CalibrationSource* calib) {
  const CompileOptions& opts = cx.opts;
  if (opts.bits != 32) {
    if (opts.qat) collect_qat_ranges(cx);
    auto& cache = opts.calibration_cache;
    std::string fingerprint = calibration_fingerprint(cx);
    bool need_hist = opts.calib_method != "minmax";
    if (cache) recall_calibration(*cache, fingerprint);
    if (cache && cache->filled &&
        (!calib || cache->given || (cache->fingerprint == fingerprint && (cache->histograms || !need_hist)))) {
      // Statistics given (fixpoint compile --stats) or kept from an earlier compile of the same
      // graph and samples (analyze): the same numbers calibration would measure.
      FP_CHECK(cache->fingerprint == fingerprint, "calibration statistics: made on another graph than this compile's "
               "(another model, --shape, --bits, --disable-pass or --no-channel-equalization): measure them with the compile's options");
      FP_CHECK(cache->histograms || !need_hist, "calibration statistics: --calib-method ", opts.calib_method,
               " needs histograms, and these hold ranges only (the first round of a sharded calibration)");
      cx.stats = cache->stats;
      cx.hist = cache->hist;
      cx.channels = cache->channels;
      cx.channel_ranges = cache->channel_ranges;
      cx.stats_equalized = cache->equalized;
      cx.calib_nonfinite.inputs = cache->input_nonfinite;
      cx.calib_nonfinite.tensors = cache->tensor_nonfinite;
    } else if (calib) {
      calibrate(cx, *calib);
      if (cache) remember_calibration(*cache, calibration_value(cx, fingerprint, calib->size(), need_hist));
    } else if (cx.qdq.activations.empty()) {
      FP_CHECK(opts.qat, "--calib is required for --bits ", opts.bits, " (or use --qat for a QAT model)");
    }
    if (equalization_applies(cx) && !cx.stats.empty()) equalize_channels(cx);  // (after calibration: done)
  }
  plan(cx);
  if (opts.adaptive_rounding && opts.bits != 32) {
    if (calib)
      round_weights_adaptively(cx, *calib);
    else
      cx.log_rewrite("adaptive_rounding", "skipped: it needs the calibration samples (--calib), not statistics alone",
                     nlohmann::json::array());
  }
  if (opts.bias_correction && opts.bits != 32) correct_biases(cx);
  drop_unread_constants(cx);
  return finish(cx);
}

// Reads a model with `import`, then runs every step of the compile.
CompileResult compile(const Importer& import, const std::string& origin, const CompileOptions& opts,
                      const CalibrationSource* calib) {
  CompileContext cx(opts);
  build_context(cx, import, origin, calib);
  return compile_context(cx, calib);
}

}  // namespace

std::shared_ptr<CalibrationCache> calibrate_model(const std::string& model_path, const CompileOptions& opts,
                                                  const CalibrationSource& calib, CalibrationPart part,
                                                  const CalibrationCache* ranges) {
  FP_CHECK(opts.bits != 32, "calibration: --bits 32 (the float reference) needs no calibration");
  FP_CHECK(calib.size() > 0, "calibration: no samples");
  CompileContext cx(opts);
  build_context(cx, [&](const ImportOptions& io) { return import_onnx_file(model_path, io); }, model_path, &calib);
  std::string fingerprint = calibration_fingerprint(cx);
  if (part == CalibrationPart::kHistograms) {
    FP_CHECK(ranges && !ranges->histograms, "calibration: measuring histograms needs the merged ranges of every part");
    FP_CHECK(ranges->fingerprint == fingerprint, "calibration: the ranges were measured on another graph than this "
             "one (another model, --shape, --bits, --disable-pass or --no-channel-equalization)");
    cx.stats = ranges->stats;
    cx.channels = ranges->channels;
    cx.channel_ranges = ranges->channel_ranges;
  }
  calibrate(cx, calib, part);
  auto c = std::make_shared<CalibrationCache>(calibration_value(
      cx, fingerprint, calib.size(), part == CalibrationPart::kHistograms || (part == CalibrationPart::kAll && opts.calib_method != "minmax")));
  c->given = true;
  return c;
}

CompileResult compile_model(const std::string& model_path, const CompileOptions& opts, const CalibrationSource* calib) {
  return compile([&](const ImportOptions& io) { return import_onnx_file(model_path, io); }, model_path, opts, calib);
}

struct ModelCompiler::Impl {
  std::string path;
  ShapeBindings shapes;
  Graph imported;
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const CompileState>> states;  // by graph_options_key
};

ModelCompiler::ModelCompiler(std::string model_path, ShapeBindings shapes) : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(model_path);
  impl_->shapes = std::move(shapes);
  ImportOptions io;
  io.shapes = impl_->shapes;
  impl_->imported = import_onnx_file(impl_->path, io);
}

ModelCompiler::~ModelCompiler() = default;

CompileResult ModelCompiler::compile(const CompileOptions& opts, const CalibrationSource* calib) {
  FP_CHECK(opts.shapes == impl_->shapes, impl_->path, ": this compiler imported the model with other --shape bindings");
  check_options(opts);
  std::string key = graph_options_key(opts, calib);
  std::shared_ptr<const CompileState> state;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->states.find(key);
    if (it != impl_->states.end()) state = it->second;
  }
  if (!state) {
    CompileContext built(opts);
    build_graph(built, [this](const ImportOptions&) { return impl_->imported; }, impl_->path, calib);
    built.prepared = std::make_shared<PreparedCache>();
    state = std::make_shared<const CompileState>(static_cast<const CompileState&>(built));
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->states.emplace(key, state);
  }
  CompileContext cx(opts, *state);
  finish_context(cx);
  return compile_context(cx, calib);
}

CompileResult compile_model_bytes(const std::string& onnx_bytes, const std::string& origin, const CompileOptions& opts,
                                  const CalibrationSource* calib) {
  return compile([&](const ImportOptions& io) { return import_onnx_bytes(onnx_bytes, origin, "", io); }, origin, opts,
                 calib);
}

CompileResult compile_graph(const Graph& imported, const std::string& origin, const CompileOptions& opts,
                            const CalibrationSource* calib) {
  FP_CHECK(opts.shapes.empty(), origin, ": --shape binds dims when a model is imported; bind them with ImportOptions "
           "(or compile the ONNX file or bytes)");
  return compile(
      [&](const ImportOptions& io) {
        Graph g = imported;
        if (io.infer_shapes) infer_shapes(g);
        return g;
      },
      origin, opts, calib);
}

}  // namespace fixpoint
