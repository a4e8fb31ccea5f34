// fixpoint run MODEL.onnx|DIR --input NAME=FILE.npy ... --output-dir DIR [--raw]
// MODEL.onnx runs the float reference; DIR (from `fixpoint compile`) runs DIR/model.fxp, as does
// the model.fxp file named itself.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "fixpoint/artifact.h"
#include "fixpoint/float_kernels.h"
#include "fixpoint/model.h"
#include "fixpoint/npy.h"
#include "fixpoint/parallel.h"
#include "fixpoint/program_runner.h"
#include "fixpoint/trace.h"
#include "fixpoint/runtime.h"

namespace fixpoint::cli {
namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs, shapes;
  std::string output_dir;
  bool verbose = false, quiet = false, raw = false;
  std::string trace_dir;
  int threads = 0;  // 0: every core
  bool reference = false;
  int repeat = 1;
  bool profile = false;
};

// --profile: wall time per op, measured from one op's end to the next (the first op from the
// run's start), averaged over the timed runs (the warm-up is left out when there are others).
class OpProfile {
 public:
  void begin_run() {
    if (++runs_ == 2 && !warm_up_dropped_) {  // the first timed run: forget the warm-up
      ms_.clear();
      runs_ = 1;
      warm_up_dropped_ = true;
    }
    last_ = std::chrono::steady_clock::now();
  }
  void end_op(const std::string& node, const std::string& op_type) {
    auto t = std::chrono::steady_clock::now();
    auto& [type, ms] = ms_[node];
    type = op_type;
    ms += std::chrono::duration<double, std::milli>(t - last_).count();
    last_ = t;
  }
  void print(int top) const {
    std::map<std::string, std::pair<int, double>> by_type;
    double total = 0;
    std::vector<std::pair<double, std::string>> nodes;
    for (const auto& [node, tm] : ms_) {
      auto& [n, ms] = by_type[tm.first];
      ++n;
      ms += tm.second / runs_;
      total += tm.second / runs_;
      nodes.emplace_back(tm.second / runs_, node);
    }
    std::vector<std::pair<double, std::string>> types;
    for (const auto& [type, v] : by_type) types.emplace_back(v.second, type);
    std::sort(types.rbegin(), types.rend());
    std::sort(nodes.rbegin(), nodes.rend());
    std::printf("profile: %.3f ms per run in ops, over %d run(s)\n%-24s %6s %10s %6s\n", total, runs_, "op type", "ops",
                "ms/run", "%");
    for (const auto& [ms, type] : types)
      std::printf("%-24s %6d %10.3f %5.1f%%\n", type.c_str(), by_type.at(type).first, ms, 100 * ms / total);
    std::printf("slowest ops:\n");
    for (size_t i = 0; i < nodes.size() && i < static_cast<size_t>(top); ++i)
      std::printf("  %10.3f ms  %-20s %s\n", nodes[i].first, ms_.at(nodes[i].second).first.c_str(), nodes[i].second.c_str());
  }

 private:
  std::map<std::string, std::pair<std::string, double>> ms_;  // node -> (op type, ms summed over runs)
  int runs_ = 0;
  bool warm_up_dropped_ = false;
  std::chrono::steady_clock::time_point last_;
};

// Runs `once` a.repeat times (the last run's outputs are kept) and, with --repeat > 1, prints
// "timing: ..." with the min and median wall time of a run: what bench/speed.py compares.
template <typename F>
auto timed_runs(const RunArgs& a, const std::string& what, F&& once) {
  std::vector<double> ms;
  auto result = once();
  for (int i = 1; i < a.repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    result = once();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!ms.empty()) {
    std::sort(ms.begin(), ms.end());
    std::printf("timing: %s min %.3f ms median %.3f ms over %zu runs (after 1 warm-up)\n", what.c_str(), ms.front(),
                ms[ms.size() / 2], ms.size());
  }
  return result;
}

void write_outputs(const RunArgs& a, const std::map<std::string, Tensor>& outputs, const std::string& suffix) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(a.output_dir, ec);
  FP_CHECK(!ec, "--output-dir '", a.output_dir, "': ", ec.message());
  for (const auto& [name, t] : outputs) {
    std::string path = (fs::path(a.output_dir) / (sanitize_name(name) + suffix + ".npy")).string();
    save_npy(path, t);
    if (!a.quiet) std::cout << name << suffix << ": " << summarize(t) << "\n  -> " << path << "\n";
  }
}

// §2.8: non-finite values are said once per tensor, never hidden (a program maps NaN to the
// zero point and saturates Inf; the float reference propagates them).
void warn_nonfinite(const std::map<std::string, Tensor>& tensors, const std::string& what) {
  for (const auto& [name, t] : tensors)
    if (NonFinite nf = count_nonfinite(t); nf.total())
      std::cerr << "fixpoint: warning: " << what << " '" << name << "' holds " << nf.text() << "\n";
}

void run_program(const RunArgs& a, std::map<std::string, Tensor> inputs, const std::string& program) {
  namespace fs = std::filesystem;
  ProgramRunner runner(load_program(program));
  runner.set_threads(a.threads ? a.threads : default_threads());
  if (inputs.count("")) {
    FP_CHECK(runner.program().inputs.size() == 1, "--input without a NAME= is only allowed for a model with one input");
    inputs[runner.program().inputs[0].name] = inputs[""];
    inputs.erase("");
  }
  TraceWriter trace(a.trace_dir);
  trace.use_report(a.model);
  trace.use_program(runner.program());
  OpProfile prof;
  std::function<void(const QOp&, const std::vector<Tensor>&)> on_op;
  if (trace.on() || a.profile)
    on_op = [&](const QOp& op, const std::vector<Tensor>& outs) {
      if (a.profile) prof.end_op(op.node.label(), cat(op.node.op_type, " ", op.kind()));
      for (size_t i = 0; trace.on() && i < outs.size(); ++i) {
        const std::string& t = op.node.outputs[i];
        auto it = runner.program().tensors.find(t);
        QParams q = it == runner.program().tensors.end() ? QParams{} : it->second;
        if (q.is_float()) trace.add(t, op.node.name, op.node.op_type, outs[i], nullptr, q);
        else trace.add(t, op.node.name, op.node.op_type, dequantize_tensor(outs[i], q), &outs[i], q);
      }
    };
  ProgramOutputs out = timed_runs(a, cat("fixed-point isa=", ProgramRunner::kernel_isa(), " threads=", runner.threads()),
                                  [&] {
                                    prof.begin_run();
                                    std::function<void()> on_inputs;
                                    if (a.profile) on_inputs = [&] { prof.end_op("(the inputs)", "quantize inputs"); };
                                    return runner.run(inputs, on_op, on_inputs);
                                  });
  if (a.profile) prof.print(a.verbose ? 1 << 30 : 15);  // -v: every op
  if (a.verbose)
    std::printf("memory: peak %.1f MiB in tensors of the run (buffer plan: storage reused after a tensor's last reader); "
                "the last run allocated %.2f MiB no freed buffer fitted (later runs reuse the outputs their caller dropped)\n",
                runner.peak_bytes() / 1048576.0, runner.fresh_bytes() / 1048576.0);
  warn_nonfinite(inputs, "input");
  write_outputs(a, out.values, "");
  if (a.raw) {
    write_outputs(a, out.codes, ".codes");
    std::ofstream scales(fs::path(a.output_dir) / "scales.txt");
    for (const auto& [name, t] : out.codes) {
      const QParams& q = runner.program().tensors.at(name);
      scales << name << " " << dtype_name(q.type) << " scale " << q.scale << " zero_point " << q.zero_point << "\n";
    }
  }
}

void run_run(const RunArgs& a) {
  namespace fs = std::filesystem;
  std::map<std::string, Tensor> inputs = load_input_options(a.inputs);
  if (std::string program = program_file(a.model); !program.empty()) return run_program(a, inputs, program);
  PipelineOptions po;
  po.verbose = a.verbose;
  po.shapes = parse_shape_options(a.shapes);
  if (inputs.count("")) {  // unnamed input: only for single-input models
    Graph probe = import_onnx_file(a.model, ImportOptions{{}, false});
    FP_CHECK(probe.inputs.size() == 1, "--input without a NAME= is only allowed for a model with one input; '", a.model,
             "' has ", probe.inputs.size());
    inputs[probe.inputs[0].name] = inputs[""];
    inputs.erase("");
  }
  std::map<std::string, Tensor> outputs;
  if (po.shapes.empty()) {
    for (const auto& [name, t] : inputs) po.shapes[name] = t.shape();
    po.shapes_origin = "input";
  }
  Executor ex(load_model(a.model, po), a.reference ? KernelRegistry::reference() : fast_float_kernels());
  TraceWriter trace(a.trace_dir);
  RunOptions ro;
  ro.threads = a.threads ? a.threads : default_threads();
  OpProfile prof;
  if (trace.on() || a.profile)
    ro.on_node = [&](const Node& n, const std::vector<Tensor>& outs) {
      if (a.profile) prof.end_op(n.label(), n.op_type);
      for (size_t i = 0; trace.on() && i < outs.size(); ++i)
        trace.add(n.outputs[i], n.name, n.op_type, outs[i], nullptr, QParams{});
    };
  if (a.profile && !trace.on())  // a trace needs every tensor: nothing fused; a profile times what runs
    ro.on_fused = [&](const Node& first, const Node& last, const Tensor&) {
      // Conv + Relu (fuse_conv_relu) by its first op; element-wise chains as one kind
      const bool chain = first.op_type != "Conv";
      prof.end_op(cat(first.label(), " .. ", last.label()), chain ? "(element-wise chain)" : first.op_type + "+" + last.op_type);
    };
  std::string what = a.reference ? std::string("float reference kernels")
                                 : cat("float isa=", float_kernel_isa(), " threads=", ro.threads);
  outputs = timed_runs(a, what, [&] {
    prof.begin_run();
    return ex.run(inputs, ro);
  });
  if (a.profile) prof.print(a.verbose ? 1 << 30 : 15);  // -v: every op
  warn_nonfinite(inputs, "input");
  warn_nonfinite(outputs, "output");
  write_outputs(a, outputs, "");
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* c = app.add_subcommand("run", "Run a model on .npy inputs and write every output as DIR/<name>.npy");
  c->add_option("model", a->model, "ONNX model file, or a folder made by `fixpoint compile` (or its model.fxp)")->required();
  c->add_option("-i,--input", a->inputs, "NAME=FILE.npy for each model input (repeatable)")->required();
  c->add_option("-o,--output-dir", a->output_dir, "Folder for the outputs (created if missing)")->required();
  c->add_option("--shape", a->shapes, "Bind an input's shape instead of taking it from the input file");
  c->add_flag("-v,--verbose", a->verbose, "Log what each graph pass changed");
  c->add_flag("-q,--quiet", a->quiet, "Do not print output summaries");
  c->add_option("--threads", a->threads, "Threads per kernel (default: every core; same bits for any count)")
      ->check(CLI::Range(1, 256));
  c->add_flag("--reference", a->reference,
              "ONNX models: run the simple reference kernels instead of the fast float path (for programs: "
              "FIXPOINT_ISA=reference)");
  c->add_option("--repeat", a->repeat, "Run N times (1 warm-up) and print min/median time per run")
      ->check(CLI::Range(1, 100000));
  c->add_option("--trace", a->trace_dir, "Write every computed tensor as .npy (+ integer codes) and index.json");
  c->add_flag("--profile", a->profile,
              "Print the wall time per op type and the 15 slowest ops, with -v every op (averaged over --repeat runs after the warm-up)");
  c->add_flag("--raw", a->raw, "Compiled programs: also write the integer codes (<name>.codes.npy) and scales.txt");
  c->callback([a] { run_run(*a); });
}

}  // namespace fixpoint::cli
