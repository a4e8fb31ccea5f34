#include "fixpoint/output_error.h"

#include <variant>

#include "fixpoint/compare.h"
#include "fixpoint/compiler.h"
#include "fixpoint/program_runner.h"

namespace fixpoint {

OutputSets run_program(const Program& p, const OutputSets& inputs, int threads) {
  ProgramRunner runner(p);
  runner.set_threads(threads);
  OutputSets r;
  for (const auto& in : inputs) r.push_back(runner.run(with_batch_dim(in, p.inputs)).values);
  return r;
}

namespace {

// An op's params as a list of values (the field list the artifact walks, op_params.h).
struct Fields {
  std::vector<Tensor> tensors;
  std::vector<int64_t> ints;
  void operator()(const char*, const Tensor& t) { tensors.push_back(t); }
  void operator()(const char*, int64_t v) { ints.push_back(v); }
  void operator()(const char*, bool v) { ints.push_back(v); }
};

Fields fields_of(OpParams p) {  // (a copy: fields() is not const; tensors share storage)
  Fields f;
  std::visit([&f](auto& x) { x.fields(f); }, p);
  return f;
}

bool same_params(const OpParams& a, const OpParams& b) {
  if (a.index() != b.index()) return false;
  Fields fa = fields_of(a), fb = fields_of(b);
  if (fa.ints != fb.ints || fa.tensors.size() != fb.tensors.size()) return false;
  for (size_t i = 0; i < fa.tensors.size(); ++i) {
    const Tensor &x = fa.tensors[i], &y = fb.tensors[i];
    if (!(x.raw() == y.raw() && x.dtype() == y.dtype() && x.shape() == y.shape()) && !bit_equal(x, y)) return false;
  }
  return true;
}

bool same_encoding(const QParams& a, const QParams& b) {
  return a.type == b.type && a.scale == b.scale && a.zero_point == b.zero_point && a.onnx_rounding == b.onnx_rounding;
}

QParams encoding_of(const Program& p, const std::string& t) {
  auto it = p.tensors.find(t);
  return it == p.tensors.end() ? QParams{} : it->second;
}

}  // namespace

size_t first_changed_op(const Program& base, const Program& trial) {
  size_t n = std::min(base.ops.size(), trial.ops.size());
  for (size_t k = 0; k < n; ++k) {
    const QOp &a = base.ops[k], &b = trial.ops[k];
    if (a.node.name != b.node.name || a.node.op_type != b.node.op_type || a.node.inputs != b.node.inputs ||
        a.node.outputs != b.node.outputs || a.fused != b.fused || a.bits != b.bits || !same_params(a.params, b.params))
      return k;
    for (const auto* names : {&a.node.inputs, &a.node.outputs})
      for (const auto& t : *names)
        if (!t.empty() && !same_encoding(encoding_of(base, t), encoding_of(trial, t))) return k;
  }
  return n;
}

TrialRuns::TrialRuns(OutputSets inputs, int threads, size_t max_bytes)
    : inputs_(std::move(inputs)), threads_(threads), max_bytes_(max_bytes) {}

const OutputSets& TrialRuns::set_base(const Program& base) {
  base_ = base;
  base_outputs_.clear();
  kept_.assign(inputs_.size(), {});
  ProgramRunner runner(base);
  runner.set_threads(threads_);
  size_t bytes = 0;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    auto& kept = kept_[i];
    auto keep = [&](const QOp& op, const std::vector<Tensor>& outs) {
      for (size_t o = 0; o < outs.size(); ++o)
        if (!op.node.outputs[o].empty() && bytes <= max_bytes_) {
          kept[op.node.outputs[o]] = outs[o];
          bytes += outs[o].nbytes();
        }
    };
    base_outputs_.push_back(runner.run(with_batch_dim(inputs_[i], base.inputs), keep).values);
  }
  if (bytes > max_bytes_) kept_.assign(inputs_.size(), {});  // too large to keep: trials run whole
  return base_outputs_;
}

OutputSets TrialRuns::run(const Program& trial) const {
  size_t first = kept_.empty() || kept_[0].empty() ? 0 : first_changed_op(base_, trial);
  ProgramRunner runner(trial);
  runner.set_threads(threads_);
  OutputSets r;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    auto in = with_batch_dim(inputs_[i], trial.inputs);
    r.push_back(first == 0 ? runner.run(in).values : runner.resume(first, in, kept_[i]).values);
  }
  return r;
}

CompileOptions trial_options(const CompileOptions& opts) {
  CompileOptions o = opts;
  o.progress = {};
  if (!o.calibration_cache) o.calibration_cache = make_calibration_cache();
  return o;
}

double OutputError::snr_db() const { return fixpoint::snr_db(signal, noise); }

OutputError output_error(const OutputSets& ref, const OutputSets& got) {
  OutputError e;
  for (size_t i = 0; i < ref.size(); ++i)
    for (const auto& [name, r] : ref[i]) {
      const Tensor& g = got[i].at(name);
      // Four partial sums (independent chains: the adds pipeline), added at the end.
      auto add = [&](auto at_r, auto at_g) {
        double sig[4] = {0, 0, 0, 0}, noi[4] = {0, 0, 0, 0};
        int64_t n = r.numel(), k = 0;
        for (; k + 4 <= n; k += 4)
          for (int j = 0; j < 4; ++j) {
            double a = at_r(k + j), d = a - at_g(k + j);
            sig[j] += a * a;
            noi[j] += d * d;
          }
        for (; k < n; ++k) {
          double a = at_r(k), d = a - at_g(k);
          sig[0] += a * a;
          noi[0] += d * d;
        }
        e.signal += (sig[0] + sig[1]) + (sig[2] + sig[3]);
        e.noise += (noi[0] + noi[1]) + (noi[2] + noi[3]);
      };
      if (r.dtype() == DType::Float32 && g.dtype() == DType::Float32)  // (graph outputs: the common case, typed)
        add([p = r.data<float>()](int64_t k) { return static_cast<double>(p[k]); },
            [p = g.data<float>()](int64_t k) { return static_cast<double>(p[k]); });
      else
        add([&r](int64_t k) { return r.get_f64(k); }, [&g](int64_t k) { return g.get_f64(k); });
    }
  return e;
}

}  // namespace fixpoint
