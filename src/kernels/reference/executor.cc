#include <algorithm>
#include <cstring>
#include <set>

#include "fixpoint/buffer_pool.h"
#include "fixpoint/runtime.h"

namespace fixpoint {

const Tensor& KernelContext::in(size_t i) const {
  const Tensor* t = input(i);
  FP_CHECK(t, node.label(), ": required input ", i, " is missing");
  return *t;
}

Tensor& KernelContext::output(size_t i, DType dtype, const Shape& shape, bool zero_fill) {
  FP_CHECK(i < outputs_.size(), node.label(), ": kernel writes output ", i, " but the node has ", outputs_.size());
  return make_output(pool_, outputs_[i], dtype, shape, zero_fill);
}

void KernelContext::set_output(size_t i, Tensor t) {
  FP_CHECK(i < outputs_.size(), node.label(), ": kernel writes output ", i, " but the node has ", outputs_.size());
  outputs_[i] = std::move(t);
}

KernelFn KernelRegistry::find(const std::string& op_type, const std::string& domain) const {
  if (!domain.empty() && domain != "ai.onnx") return nullptr;
  auto it = kernels_.find(op_type);
  return it == kernels_.end() ? nullptr : it->second;
}

PrepareKernelFn KernelRegistry::find_prepared(const std::string& op_type, const std::string& domain) const {
  if (!domain.empty() && domain != "ai.onnx") return nullptr;
  auto it = prepared_.find(op_type);
  return it == prepared_.end() ? nullptr : it->second;
}

std::vector<std::string> KernelRegistry::ops() const {
  std::vector<std::string> r;
  for (const auto& [k, v] : kernels_) r.push_back(k);
  return r;
}

static void invoke(KernelFn fn, const Node& node, const std::vector<const Tensor*>& inputs, std::vector<Tensor>& outs,
                   BufferPool* pool, const PreparedKernel* prepared = nullptr, int threads = 1) {
  KernelContext ctx(node, inputs, outs, pool);
  ctx.threads = threads;
  try {
    if (!prepared || !prepared->run(ctx)) fn(ctx);
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.find(node.label()) == std::string::npos) fail(node.label(), ": ", msg);
    throw;
  } catch (const std::bad_alloc&) {
    fail(node.label(), ": out of memory");
  } catch (const std::exception& e) {
    fail(node.label(), ": ", e.what());
  }
  for (size_t i = 0; i < outs.size(); ++i)
    FP_CHECK(node.outputs[i].empty() || outs[i].dtype() != DType::Undefined, node.label(), ": output ", i,
             " was not produced");
}

std::vector<Tensor> run_node(const Node& node, const std::vector<const Tensor*>& inputs) {
  return run_node(node, inputs, nullptr, 1);
}

std::vector<Tensor> run_node(const Node& node, const std::vector<const Tensor*>& inputs, const PreparedKernel* prepared,
                             int threads, BufferPool* pool) {
  KernelFn fn = KernelRegistry::reference().find(node.op_type, node.domain);
  FP_CHECK(fn, node.label(), ": op '", node.op_type, "' is not supported");
  std::vector<Tensor> outs(node.outputs.size());
  invoke(fn, node, inputs, outs, pool, prepared, threads);
  return outs;
}

Executor::Executor(Graph graph, const KernelRegistry& registry) : graph_(std::move(graph)), pool_(new BufferPool) {
  graph_.validate();
  for (const auto& n : graph_.nodes) {
    KernelFn fn = registry.find(n.op_type, n.domain);
    FP_CHECK(fn, n.label(), ": op '", (n.domain.empty() ? "" : n.domain + "."), n.op_type,
             "' is not supported by the float reference runtime");
    kernels_.push_back(fn);
    PrepareKernelFn prep = registry.find_prepared(n.op_type, n.domain);
    prepared_.push_back(prep ? prep(n, graph_) : nullptr);
  }
  uses_ = graph_.use_counts();
  fused_.resize(graph_.nodes.size());
  for (size_t k = 0; k < graph_.nodes.size() && !registry.fusers().empty(); ++k)
    for (FuseKernelFn fuse : registry.fusers())
      if ((fused_[k] = fuse(graph_, uses_, prepared_, k))) {
        k += fused_[k]->count() - 1;  // fused kernels never overlap
        break;
      }
}

Executor::~Executor() = default;

static void check_input(const ValueInfo& vi, const Tensor& t) {
  FP_CHECK(vi.dtype == DType::Undefined || vi.dtype == t.dtype(), "input '", vi.name, "': model expects ",
           dtype_name(vi.dtype), ", got ", dtype_name(t.dtype()));
  if (!vi.shape) return;
  FP_CHECK(vi.shape->size() == t.shape().size(), "input '", vi.name, "': model expects shape ", vi.shape_text(),
           " (rank ", vi.shape->size(), "), got ", shape_str(t.shape()));
  for (size_t i = 0; i < vi.shape->size(); ++i) {
    const Dim& d = (*vi.shape)[i];
    FP_CHECK(!d.known() || d.value == t.shape()[i], "input '", vi.name, "': model expects shape ", vi.shape_text(),
             ", got ", shape_str(t.shape()));
  }
}

void check_inputs(const std::vector<ValueInfo>& declared, const std::map<std::string, Tensor>& inputs) {
  for (const auto& [name, t] : inputs) {
    bool known = std::any_of(declared.begin(), declared.end(), [&](const ValueInfo& v) { return v.name == name; });
    if (!known) {
      std::string names;
      for (const auto& v : declared) names += (names.empty() ? "'" : ", '") + v.name + "'";
      fail("input '", name, "' is not an input of the model (its inputs: ", names, ")");
    }
  }
  std::map<std::string, int64_t> symbols;  // symbolic dims must bind consistently
  for (const auto& vi : declared) {
    auto it = inputs.find(vi.name);
    FP_CHECK(it != inputs.end(), "missing input '", vi.name, "' (", dtype_name(vi.dtype), "[", vi.shape_text(), "])");
    check_input(vi, it->second);
    if (!vi.shape) continue;
    const Shape& s = it->second.shape();
    for (size_t i = 0; i < vi.shape->size(); ++i) {
      const Dim& d = (*vi.shape)[i];
      if (d.known() || d.symbol.empty()) continue;
      auto [sit, fresh] = symbols.emplace(d.symbol, s[i]);
      FP_CHECK(fresh || sit->second == s[i], "input '", vi.name, "': dimension '", d.symbol, "' is ", s[i],
               " here but ", sit->second, " in another input");
    }
  }
}

std::map<std::string, Tensor> Executor::run(const std::map<std::string, Tensor>& inputs, const RunOptions& opts) {
  check_inputs(graph_.inputs, inputs);
  pool_->reclaim();  // earlier runs' outputs their caller dropped
  std::map<std::string, Tensor> values;
  for (const auto& vi : graph_.inputs) values[vi.name] = inputs.at(vi.name);
  for (const auto& [name, t] : graph_.initializers) values[name] = t;
  std::map<std::string, int> remaining = uses_;
  std::vector<const Tensor*> ins;
  // Release tensors whose last reader was `node`; their storage returns to the pool.
  auto release = [&](const Node& node) {
    for (const auto& in : node.inputs) {
      if (in.empty() || graph_.initializers.count(in)) continue;
      if (--remaining[in] == 0) {
        auto it = values.find(in);
        if (it != values.end()) {
          pool_->give(it->second.release_storage());
          values.erase(it);
        }
      }
    }
  };
  const bool fuse = !opts.keep_all && (!opts.on_node || opts.on_fused);
  auto value = [&](const std::string& name) -> const Tensor* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  };
  for (size_t k = 0; k < graph_.nodes.size(); ++k) {
    const Node& node = graph_.nodes[k];
    if (fuse && fused_[k]) {
      const FusedKernel& f = *fused_[k];
      Tensor out;
      bool ran;
      try {
        ran = f.run(value, pool_.get(), opts.threads, out);
      } catch (const std::exception& e) {
        fail(node.label(), " (and the ", f.count() - 1, " node(s) after it, run as one): ", e.what());
      }
      if (ran) {
        ++fused_runs_;
        const Node& last = graph_.nodes[k + f.count() - 1];
        if (opts.on_fused) opts.on_fused(node, last, out);
        values[last.outputs[0]] = std::move(out);
        for (size_t j = k; j < k + f.count(); ++j) release(graph_.nodes[j]);
        if (remaining[last.outputs[0]] == 0) values.erase(last.outputs[0]);
        k += f.count() - 1;
        continue;
      }
    }
    ins.clear();
    for (const auto& in : node.inputs) {
      if (in.empty()) { ins.push_back(nullptr); continue; }
      auto it = values.find(in);
      FP_CHECK(it != values.end(), node.label(), ": input tensor '", in, "' has no value");
      ins.push_back(&it->second);
    }
    std::vector<Tensor> outs(node.outputs.size());
    invoke(kernels_[k], node, ins, outs, opts.keep_all ? nullptr : pool_.get(), prepared_[k].get(), opts.threads);
    if (opts.on_node) opts.on_node(node, outs);
    for (size_t i = 0; i < outs.size(); ++i)
      if (!node.outputs[i].empty()) values[node.outputs[i]] = std::move(outs[i]);
    if (opts.keep_all) continue;
    release(node);
    for (const auto& o : node.outputs)  // outputs nobody reads
      if (!o.empty() && remaining[o] == 0) {
        auto it = values.find(o);
        if (it != values.end()) {
          pool_->give(it->second.release_storage());
          values.erase(it);
        }
      }
  }
  std::map<std::string, Tensor> result;
  std::vector<std::shared_ptr<TensorStorage>> handed;
  for (const auto& out : graph_.outputs) {
    auto it = values.find(out.name);
    FP_CHECK(it != values.end(), "graph output '", out.name, "' was not computed");
    result[out.name] = it->second;
    handed.push_back(it->second.shared_storage());
  }
  pool_->lend(std::move(handed));
  return result;
}

}  // namespace fixpoint
