// fixpoint: graph executor and kernel registry.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fixpoint/ir.h"

namespace fixpoint {

class BufferPool;

// What a kernel sees: its node, its inputs, and a way to make its outputs.
class KernelContext {
 public:
  KernelContext(const Node& node, std::vector<const Tensor*> inputs, std::vector<Tensor>& outputs, BufferPool* pool)
      : node(node), inputs_(std::move(inputs)), outputs_(outputs), pool_(pool) {}

  const Node& node;
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  // Optional input: nullptr when omitted or out of range.
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  // Required input: throws naming the node when omitted.
  const Tensor& in(size_t i) const;
  // Is output i wanted (present and named)?
  bool wants_output(size_t i) const { return i < outputs_.size() && !node.outputs[i].empty(); }
  // Allocates output i, zero-filled unless the kernel writes every element (zero_fill = false:
  // a reused buffer then keeps stale values until the kernel overwrites them).
  Tensor& output(size_t i, DType dtype, const Shape& shape, bool zero_fill = true);
  // Sets output i to an existing tensor (e.g. a reshaped view of an input).
  void set_output(size_t i, Tensor t);
  // Threads the kernel may use. Kernels give the same bits for any count.
  int threads = 1;

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor>& outputs_;
  BufferPool* pool_;
};

using KernelFn = void (*)(KernelContext&);

// A kernel specialised for one node when an executor is built, e.g. with its constant weights
// packed once. run() returns false for inputs it does not handle (dtype, rank, a shape it was not
// made for); the registry's plain kernel then runs the node.
class PreparedKernel {
 public:
  virtual ~PreparedKernel() = default;
  virtual bool run(KernelContext& c) const = 0;
};
// Makes the prepared kernel of `node` given the graph's constants, or nullptr to decline.
using PrepareKernelFn = std::unique_ptr<PreparedKernel> (*)(const Node& node, const Graph& graph);

// Nodes first .. first + count() - 1 of a graph run as one kernel whose only output is the last
// node's output; the tensors between them are never stored. Built once per executor; used only
// by runs that do not observe intermediates (no on_node, no keep_all). run() returns false for
// inputs it does not handle, and the nodes then run one by one: it must give their bits.
class FusedKernel {
 public:
  virtual ~FusedKernel() = default;
  virtual size_t count() const = 0;
  // value(name): a computed tensor or constant (nullptr if it has none). out: the last node's
  // output, allocated from `pool` when non-null.
  virtual bool run(const std::function<const Tensor*(const std::string&)>& value, BufferPool* pool, int threads,
                   Tensor& out) const = 0;
};
// The fused kernel starting at node `first` of the graph, or nullptr. uses: the graph's
// use_counts() (readers of each tensor, a graph output counting as one), made once by the caller;
// prepared: the executor's prepared kernel of each node (null where none), which it keeps as
// long as the fused kernels, so a fused kernel may run one of them.
using FuseKernelFn = std::unique_ptr<FusedKernel> (*)(const Graph& graph, const std::map<std::string, int>& uses,
                                                      const std::vector<std::unique_ptr<PreparedKernel>>& prepared,
                                                      size_t first);

class KernelRegistry {
 public:
  void add(const std::string& op_type, KernelFn fn) { kernels_[op_type] = fn; }
  void add_prepared(const std::string& op_type, PrepareKernelFn fn) { prepared_[op_type] = fn; }
  // Fusers are tried in the order added at each node; the first fused kernel found is taken.
  void add_fuser(FuseKernelFn fn) { fusers_.push_back(fn); }
  const std::vector<FuseKernelFn>& fusers() const { return fusers_; }
  KernelFn find(const std::string& op_type, const std::string& domain) const;
  PrepareKernelFn find_prepared(const std::string& op_type, const std::string& domain) const;
  std::vector<std::string> ops() const;
  // The float reference kernels (src/kernels/reference).
  static const KernelRegistry& reference();

 private:
  std::map<std::string, KernelFn> kernels_;
  std::map<std::string, PrepareKernelFn> prepared_;
  std::vector<FuseKernelFn> fusers_;
};

// Runs one node with the reference kernels (used by constant folding and tests).
std::vector<Tensor> run_node(const Node& node, const std::vector<const Tensor*>& inputs);
// The same with `prepared` (may be null) tried first, on `threads` threads, outputs on storage
// from `pool` where it has some.
std::vector<Tensor> run_node(const Node& node, const std::vector<const Tensor*>& inputs, const PreparedKernel* prepared,
                             int threads, BufferPool* pool = nullptr);

// Checks the given inputs against a model's declared inputs: unknown or missing names, dtypes,
// ranks, fixed dims, and symbolic dims bound consistently across inputs. Throws naming the input.
void check_inputs(const std::vector<ValueInfo>& declared, const std::map<std::string, Tensor>& inputs);

struct RunOptions {
  // Called after each node with its outputs (tracing, debugging). Must not modify them. Set
  // alone, it sees every node, so no nodes are fused (FusedKernel).
  std::function<void(const Node&, const std::vector<Tensor>&)> on_node;
  // Called after nodes first .. last ran as one fused kernel, with its output; setting it lets a
  // run with on_node fuse (on_node then sees only the nodes that ran alone): profiles.
  std::function<void(const Node& first, const Node& last, const Tensor& out)> on_fused;
  // Keep every intermediate tensor alive (disables buffer reuse).
  bool keep_all = false;
  // Threads per kernel (kernels that use them give the same bits for any count).
  int threads = 1;
};

// Executes a graph in topological order. Tensors are freed after their last use and their
// storage reused for later outputs. Deterministic: same inputs, same bits. Nodes whose op has a
// prepared kernel in the registry get it made once here (fast_float_kernels() packs weights).
class Executor {
 public:
  explicit Executor(Graph graph, const KernelRegistry& registry = KernelRegistry::reference());
  ~Executor();
  const Graph& graph() const { return graph_; }
  // Checks names, dtypes and shapes of the inputs, runs, returns the graph outputs by name.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs, const RunOptions& opts = {});
  // Node runs of fused kernels so far (tests: a chain that should fuse did).
  int64_t fused_runs() const { return fused_runs_; }

 private:
  Graph graph_;
  std::vector<KernelFn> kernels_;
  std::vector<std::unique_ptr<PreparedKernel>> prepared_;
  std::vector<std::unique_ptr<FusedKernel>> fused_;  // per node: the fused kernel starting there
  int64_t fused_runs_ = 0;
  std::map<std::string, int> uses_;
  std::unique_ptr<BufferPool> pool_;
};

}  // namespace fixpoint
