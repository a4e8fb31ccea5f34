// Chains of float element-wise nodes run as one kernel (the FusedKernel of fixpoint/runtime.h).
// PaddleOCR's detector follows each of its convolutions with eight such nodes (an affine Mul and
// Add, then HardSwish as Add, Clip, Mul, Div, then another Mul and Add): each one a pass over a
// tensor of up to 13 MB, 21 of its 84 ms per run on one thread. A chain reads its inputs once
// and writes its last output once, element block by element block, the intermediates living in
// a few kilobytes of stack; each step is the table's vectorized loop (F32Kernels::pointwise).
// The detector's 29 chains take 9.7 ms per run on one thread (`run --profile`).
//
// A chain is a run of consecutive nodes (graph order) of Add, Sub, Mul, Div, Relu, Clip and
// Sigmoid whose intermediate outputs are read by later nodes of the chain only (never by another
// node, never graph outputs). When it runs, every operand from outside must be float32 and
// either the chain's shape (the shape of its first such operand) or a single element no higher
// in rank; otherwise (broadcasts, other dtypes) it declines and the nodes run one by one. Each
// element goes through the same IEEE operations, in the same operand order, as the nodes'
// kernels (elementwise_f32.cc, unary_f32.cc and the reference definitions they share), so the
// output has their bits. Runs that observe every tensor (trace, compare, calibration) never
// fuse (fixpoint/runtime.h).
#include <algorithm>
#include <array>
#include <cmath>

#include "f32_kernels.h"
#include "fast_float_ops.h"
#include "fixpoint/buffer_pool.h"
#include "fixpoint/graph_match.h"
#include "fixpoint/parallel.h"

namespace fixpoint::fk {
namespace {

using Kind = PointwiseKind;

// An operand: the output of chain step `index` (kStep) or external tensor `name` (kOuter).
struct Operand {
  enum From { kStep, kOuter };
  From from = kOuter;
  int index = 0;
  std::string name;
};

struct Step {
  Kind kind = Kind::kAdd;
  std::array<Operand, 3> in;  // kAffine, kHardSwish: the row, then their two scalars
  int arity = 1;
  float lo = 0, hi = 0;  // Clip's bounds (constants when the chain is made)
};

constexpr bool macro(Kind k) { return k == Kind::kAffine || k == Kind::kHardSwish; }

bool step_kind(const std::string& op, Kind& k) {
  static const std::pair<const char*, Kind> kinds[] = {{"Add", Kind::kAdd},   {"Sub", Kind::kSub},
                                                       {"Mul", Kind::kMul},   {"Div", Kind::kDiv},
                                                       {"Relu", Kind::kRelu}, {"Clip", Kind::kClip},
                                                       {"Sigmoid", Kind::kSigmoid}};
  for (const auto& [name, kind] : kinds)
    if (op == name) {
      k = kind;
      return true;
    }
  return false;
}

// Clip's bounds as constants (match::clip_bounds), the way ref::clip_bounds reads them at run
// time: false unless each input bound is a float32 scalar.
bool clip_constants(const Node& n, const Graph& g, float& lo, float& hi) {
  double l, h;
  if (!match::clip_bounds(g, n, &l, &h)) return false;
  for (size_t k : {1, 2}) {
    if (n.opset < 11 || n.inputs.size() <= k || n.inputs[k].empty()) continue;
    const Tensor* b = match::constant(g, n.inputs[k]);
    if (!b || b->dtype() != DType::Float32 || b->numel() != 1) return false;
  }
  lo = static_cast<float>(l);  // exact: float attributes and float32 constants
  hi = static_cast<float>(h);
  return true;
}

class PointwiseChain final : public FusedKernel {
 public:
  // steps: the nodes' steps, runs of them grouped (group_macros); nodes: how many nodes they are.
  PointwiseChain(std::vector<Step> steps, size_t nodes, const F32Kernels* k)
      : steps_(std::move(steps)), nodes_(nodes), k_(k) {}
  size_t count() const override { return nodes_; }

  bool run(const std::function<const Tensor*(const std::string&)>& value, BufferPool* pool, int threads,
           Tensor& out) const override {
    // The outer operands: the chain's shape from the first full one; the rest full or scalar.
    const Shape* shape = nullptr;
    std::vector<const Tensor*> outer(steps_.size() * 3, nullptr);
    for (size_t s = 0; s < steps_.size(); ++s)
      for (int j = 0; j < steps_[s].arity; ++j) {
        const Operand& o = steps_[s].in[j];
        if (o.from != Operand::kOuter) continue;
        const Tensor* t = value(o.name);
        if (!t || t->dtype() != DType::Float32) return false;
        if (macro(steps_[s].kind) && j > 0 && t->numel() != 1) return false;  // their scalars
        outer[s * 3 + j] = t;
        if (t->numel() != 1 && !shape) shape = &t->shape();
      }
    if (!shape || shape_numel(*shape) == 0) return false;
    for (size_t s = 0; s < steps_.size(); ++s) {  // every step reads at least one row
      bool row = false;
      for (int j = 0; j < steps_[s].arity; ++j) {
        const Tensor* t = outer[s * 3 + j];
        row = row || !t || t->numel() != 1;
      }
      if (!row) return false;
    }
    for (const Tensor* t : outer)
      if (t && t->shape() != *shape && !(t->numel() == 1 && t->rank() <= static_cast<int64_t>(shape->size())))
        return false;
    const int64_t n = shape_numel(*shape);
    out = pool ? pool->make(DType::Float32, *shape, false) : Tensor(DType::Float32, *shape);
    float* y = out.data<float>();
    // Elements per task, and per block (the steps' rows stay in L1). Unlike the single nodes
    // (kElementwiseThreads), a chain does several operations per element read and splits over
    // the run's threads: the OCR detector at 2 threads took 74.3 ms so against 86.0 unfused, and
    // 83.3 against 87.3 with its chains on one thread (medians of alternating runs).
    constexpr int64_t kTask = 16384, kBlock = 512;
    const size_t S = steps_.size();
    parallel_for((n + kTask - 1) / kTask, threads, [&](int64_t task) {
      float rows[kMaxSteps - 1][kBlock];  // the intermediates of one block
      for (int64_t lo = task * kTask; lo < std::min(n, (task + 1) * kTask); lo += kBlock) {
        const int64_t len = std::min(kBlock, n - lo);
        for (size_t s = 0; s < S; ++s) {
          const Step& st = steps_[s];
          const float* p[3] = {nullptr, nullptr, nullptr};
          float v[3] = {0, 0, 0};
          for (int j = 0; j < st.arity; ++j) {
            const Operand& o = st.in[j];
            const Tensor* t = outer[s * 3 + j];
            if (o.from == Operand::kStep)
              p[j] = rows[o.index];
            else if (t->numel() == 1)
              v[j] = t->data<float>()[0];
            else
              p[j] = t->data<float>() + lo;
          }
          float* dst = s + 1 == S ? y + lo : rows[s];
          k_->pointwise(PointwiseStep{st.kind, p[0], v[0], p[1], v[1], st.lo, st.hi, dst, len, v[2]});
        }
      }
    });
    return true;
  }

  static constexpr size_t kMaxSteps = 16;

 private:
  std::vector<Step> steps_;
  size_t nodes_;
  const F32Kernels* k_;
};

// The step for node n given the chain so far (outputs of earlier steps by name), or false.
bool make_step(const Node& n, const Graph& g, const std::map<std::string, int>& produced, Step& st) {
  if (n.outputs.size() != 1 || n.outputs[0].empty() || !step_kind(n.op_type, st.kind)) return false;
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  const bool binary_op = st.kind <= Kind::kDiv;
  if (binary_op && (n.inputs.size() != 2 || (n.opset < 7 && n.attr_int("broadcast", 0)))) return false;
  if (st.kind == Kind::kClip && !clip_constants(n, g, st.lo, st.hi)) return false;
  if (!binary_op && (n.inputs.empty() || (st.kind != Kind::kClip && n.inputs.size() != 1))) return false;
  st.arity = binary_op ? 2 : 1;
  for (int j = 0; j < st.arity; ++j) {
    const std::string& in = n.inputs[static_cast<size_t>(j)];
    if (in.empty()) return false;
    auto it = produced.find(in);
    st.in[static_cast<size_t>(j)] = it != produced.end() ? Operand{Operand::kStep, it->second, {}}
                                                         : Operand{Operand::kOuter, 0, in};
  }
  return true;
}

// A float32 constant of one element, not NaN (the macro steps' scalars: with a NaN operand, which
// NaN a node returns would depend on its operand order).
bool scalar_constant(const Operand& o, const Graph& g) {
  if (o.from != Operand::kOuter) return false;
  const Tensor* t = match::constant(g, o.name);
  return t && t->dtype() == DType::Float32 && t->numel() == 1 && !std::isnan(t->data<float>()[0]);
}

bool same(const Operand& a, const Operand& b) { return a.from == b.from && a.index == b.index && a.name == b.name; }

// Operand j of st refers to step i.
bool reads_step(const Step& st, int j, size_t i) {
  return st.in[static_cast<size_t>(j)].from == Operand::kStep && st.in[static_cast<size_t>(j)].index == static_cast<int>(i);
}

// Steps from i as one kAffine (Mul by a scalar constant, then Add of one, the product read only
// by the Add) or kHardSwish (Add of a scalar constant k to x, Clip, Mul by the same x, Div by a
// scalar constant, each intermediate read only by the next): their count, 0 if neither. Each
// element then runs one loop instead of two or four passes over the block (the OCR models' chains
// are affine, HardSwish, affine). The nodes' operations in their order, so the same bits; Add
// and Mul operand orders do not matter with non-NaN constants (x + k = k + x bit for bit).
size_t match_macro(const std::vector<Step>& st, const std::vector<int>& reads, size_t i, const Graph& g, Step& out) {
  auto other = [](const Step& s, int j) { return s.in[static_cast<size_t>(1 - j)]; };
  if (i + 1 < st.size() && st[i].kind == Kind::kMul && st[i + 1].kind == Kind::kAdd && reads[i] == 1)
    for (int j = 0; j < 2; ++j)        // the Mul's scalar
      for (int jj = 0; jj < 2; ++jj)   // the Add's read of the product
        if (scalar_constant(st[i].in[static_cast<size_t>(j)], g) && !scalar_constant(other(st[i], j), g) &&
            reads_step(st[i + 1], jj, i) && scalar_constant(other(st[i + 1], jj), g)) {
          out = Step{Kind::kAffine, {other(st[i], j), st[i].in[static_cast<size_t>(j)], other(st[i + 1], jj)}, 3};
          return 2;
        }
  if (i + 3 < st.size() && st[i].kind == Kind::kAdd && st[i + 1].kind == Kind::kClip && st[i + 2].kind == Kind::kMul &&
      st[i + 3].kind == Kind::kDiv && reads[i] == 1 && reads[i + 1] == 1 && reads[i + 2] == 1 &&
      reads_step(st[i + 1], 0, i) && reads_step(st[i + 3], 0, i + 2) && scalar_constant(st[i + 3].in[1], g))
    for (int j = 0; j < 2; ++j)        // the Add's scalar
      for (int jj = 0; jj < 2; ++jj) {  // the Mul's read of the Clip
        const Operand x = other(st[i], j);
        if (scalar_constant(st[i].in[static_cast<size_t>(j)], g) && !scalar_constant(x, g) &&
            reads_step(st[i + 2], jj, i + 1) && same(other(st[i + 2], jj), x)) {
          out = Step{Kind::kHardSwish, {x, st[i].in[static_cast<size_t>(j)], st[i + 3].in[1]}, 3, st[i + 1].lo,
                     st[i + 1].hi};
          return 4;
        }
      }
  return 0;
}

// The chain with its affine and HardSwish runs as single steps (match_macro), step references
// renumbered.
std::vector<Step> group_macros(const std::vector<Step>& st, const Graph& g) {
  std::vector<int> reads(st.size(), 0), index(st.size(), -1);
  for (const Step& s : st)
    for (int j = 0; j < s.arity; ++j)
      if (s.in[static_cast<size_t>(j)].from == Operand::kStep) ++reads[static_cast<size_t>(s.in[static_cast<size_t>(j)].index)];
  std::vector<Step> out;
  for (size_t i = 0; i < st.size();) {
    Step m;
    size_t n = match_macro(st, reads, i, g, m);
    if (n == 0) m = st[i], n = 1;
    for (int j = 0; j < m.arity; ++j) {
      Operand& o = m.in[static_cast<size_t>(j)];
      if (o.from == Operand::kStep) o.index = index[static_cast<size_t>(o.index)];  // read from outside the run
    }
    index[i + n - 1] = static_cast<int>(out.size());
    out.push_back(m);
    i += n;
  }
  return out;
}

// The longest chain from node `first` whose intermediates only its own later steps read.
std::unique_ptr<FusedKernel> fuse_pointwise_chain(const Graph& g, const std::map<std::string, int>& uses,
                                                  const std::vector<std::unique_ptr<PreparedKernel>>&, size_t first) {
  std::map<std::string, int> produced, inner_reads;
  std::vector<Step> steps;
  size_t best = 0;  // steps of the longest valid prefix
  for (size_t k = first; k < g.nodes.size() && steps.size() < PointwiseChain::kMaxSteps; ++k) {
    Step st;
    if (!make_step(g.nodes[k], g, produced, st)) break;
    for (int j = 0; j < st.arity; ++j)
      if (st.in[static_cast<size_t>(j)].from == Operand::kStep) ++inner_reads[g.nodes[k].inputs[static_cast<size_t>(j)]];
    produced[g.nodes[k].outputs[0]] = static_cast<int>(steps.size());
    steps.push_back(st);
    // Valid when every output but the last is read only inside (and its reads so far are all;
    // a graph output's use count has one more, so it never is).
    bool valid = steps.size() >= 2;
    for (size_t s = first; valid && s + 1 < first + steps.size(); ++s) {
      const std::string& o = g.nodes[s].outputs[0];
      auto u = uses.find(o);
      valid = (u == uses.end() ? 0 : u->second) == inner_reads[o];
    }
    if (valid) best = steps.size();
  }
  if (best < 2) return nullptr;
  steps.resize(best);
  const size_t nodes = steps.size();
  return std::make_unique<PointwiseChain>(group_macros(steps, g), nodes, selected_f32_kernels());
}

}  // namespace

void register_pointwise_chains(KernelRegistry& r) { r.add_fuser(fuse_pointwise_chain); }

}  // namespace fixpoint::fk
