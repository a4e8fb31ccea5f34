#include "fixpoint/program_runner.h"

#include <algorithm>
#include <functional>
#include <type_traits>

#include "../kernels/reference/integer/integer_kernels.h"
#include "../kernels/x86/conv_gemm.h"
#include "../kernels/x86/requant.h"
#include "fixpoint/buffer_pool.h"
#include "fixpoint/cpu_isa.h"
#include "fixpoint/fixedpoint.h"
#include "fixpoint/float_kernels.h"
#include "fixpoint/parallel.h"
#include "fixpoint/runtime.h"

namespace fixpoint {
namespace {

// (5) float tensor -> integer codes of q.
// Elements per task of the (de)quantization loops: each element is computed alone, so any
// split (and any thread count) gives the same bits.
constexpr int64_t kQuantBlock = 16384;

// (5) of every element, on storage from `pool` where it has some (every element is written).
Tensor quantize_tensor(const Tensor& t, const QParams& q, int threads = 1, BufferPool* pool = nullptr) {
  Tensor out = pool ? pool->make(q.type, t.shape(), false) : Tensor(q.type, t.shape());
  fx::Range r = fx::range_of(q.type);
  const int64_t n = t.numel();
  const bool avx512 = selected_isa() == "avx512vnni", avx2 = avx512 || selected_isa() == "avx2";
  qref::visit_int(q.type, [&](auto tag) {  // typed loops: no int64 copy (the same (5) per element)
    using T = decltype(tag);
    T* o = out.data<T>();
    parallel_for_chunks(n, kQuantBlock, threads, [&](int64_t lo, int64_t hi) {
      if (t.dtype() == DType::Float32) {
        const float* p = t.data<float>();
        int64_t i = lo;
        if (avx512 && sizeof(T) <= 2 && !q.onnx_rounding && q.zero_point >= r.lo && q.zero_point <= r.hi) {
          i += xk::quantize_row_f32_avx512(p + lo, hi - lo, q.scale, q.zero_point, r.lo, r.hi, o + lo,
                                           static_cast<int>(sizeof(T)));
        } else if (avx2 && !q.onnx_rounding && q.zero_point >= INT32_MIN && q.zero_point <= INT32_MAX) {  // codes within int32
          int32_t codes[kQuantBlock];
          int64_t done = xk::quantize_row_f32_avx2(p + lo, hi - lo, q.scale, q.zero_point, r.lo, r.hi, codes);
          for (int64_t j = 0; j < done; ++j) o[lo + j] = static_cast<T>(codes[j]);
          i += done;
        }
        for (; i < hi; ++i) o[i] = static_cast<T>(q.quantize(p[i]));
      } else {
        for (int64_t i = lo; i < hi; ++i) o[i] = static_cast<T>(q.quantize(t.get_f64(i)));
      }
    });
  });
  return out;
}

}  // namespace

// (6) integer codes -> float32.
Tensor dequantize_tensor(const Tensor& t, const QParams& q, int threads, BufferPool* pool) {
  Tensor out = pool ? pool->make(DType::Float32, t.shape(), false) : Tensor(DType::Float32, t.shape());  // every element written
  float* o = out.data<float>();
  const int64_t n = t.numel();
  qref::visit_int(t.dtype(), [&](auto tag) {
    const auto* p = t.data<decltype(tag)>();
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
    // 8/16-bit codes and |z| <= 2^30: q - z is exact in int32 and converts to the same double as
    // the int64 difference, and GCC vectorizes the loop (cvtdq2pd; the baseline ISA has no
    // int64 -> double vector conversion). The same (6) per element.
    const bool i32 = sizeof(T) <= 2 && q.zero_point >= -(int64_t{1} << 30) && q.zero_point <= (int64_t{1} << 30);
    parallel_for_chunks(n, kQuantBlock, threads, [&](int64_t lo, int64_t hi) {
      if (i32) {
        const int32_t z = static_cast<int32_t>(q.zero_point);
        const double s = q.scale;
        for (int64_t i = lo; i < hi; ++i) o[i] = static_cast<float>(s * static_cast<double>(static_cast<int32_t>(p[i]) - z));
        return;
      }
      for (int64_t i = lo; i < hi; ++i) o[i] = fx::dequantize(static_cast<int64_t>(p[i]), q.scale, q.zero_point);
    });
  });
  return out;
}

ProgramRunner::ProgramRunner(Program p) : prog_(std::move(p)) {
  Graph constants;  // what prepared float kernels read their weights from
  for (const auto& [name, t] : prog_.float_constants) constants.initializers.emplace(name, t);
  for (const auto& op : prog_.ops) {
    std::shared_ptr<const PreparedKernel> fast;
    if (op.is<params::Float>() || op.is<params::Move>()) {
      FP_CHECK(KernelRegistry::reference().find(op.node.op_type, op.node.domain), op.node.label(), ": op '",
               op.node.op_type, "' is not supported by the runtime");
      PrepareKernelFn prep = fast_float_kernels().find_prepared(op.node.op_type, op.node.domain);
      if (prep) fast = prep(op.node, constants);  // Move ops too: a kernel declines dtypes it does not take
    } else {
      FP_CHECK(qref::find_integer_kernel(std::string(op.kind())), op.node.label(), ": no integer kernel for op kind '", op.kind(), "'");
    }
    float_kernels_.push_back(std::move(fast));
    for (const auto& in : op.node.inputs)
      if (!in.empty()) ++readers_[in];
  }
  pack_all_weights();
  for (const auto& vi : prog_.outputs) readers_[vi.name] = INT32_MAX;  // kept to the end
}

// Every weighted op's weights packed once, on every core: the largest first, dealt round-robin
// so that each thread's contiguous run of items (parallel_for) holds a like share of the bytes
// (ResNet-18's largest layers are its last). Packing an op is a pure function of the op.
void ProgramRunner::pack_all_weights() {
  packed_.assign(prog_.ops.size(), nullptr);
  std::vector<size_t> weighted;
  for (size_t i = 0; i < prog_.ops.size(); ++i)
    if (weighted_params(prog_.ops[i].params) && !prog_.ops[i].node.inputs.empty()) weighted.push_back(i);
  auto bytes = [&](size_t i) { return weighted_params(prog_.ops[i].params)->weight.nbytes(); };
  std::stable_sort(weighted.begin(), weighted.end(), [&](size_t a, size_t b) { return bytes(a) > bytes(b); });
  const int64_t n = static_cast<int64_t>(weighted.size());
  const int t = parallel_slots(n, default_threads());
  std::vector<size_t> items;
  for (int k = 0; k < t; ++k)
    for (int64_t j = k; j < n; j += t) items.push_back(weighted[static_cast<size_t>(j)]);
  parallel_for(n, t, [&](int64_t j) {
    const QOp& op = prog_.ops[items[static_cast<size_t>(j)]];
    packed_[items[static_cast<size_t>(j)]] = xk::pack_weights(op, q_of(op.node.inputs[0]).type, selected_isa(), amx_enabled());
  });
}

int64_t ProgramRunner::index_of(const QOp& op) const {
  const QOp* first = prog_.ops.data();
  bool ours = !prog_.ops.empty() && !std::less<const QOp*>()(&op, first) &&
              std::less<const QOp*>()(&op, first + prog_.ops.size());
  return ours ? &op - first : -1;
}

const std::string& ProgramRunner::kernel_isa() {
  static const std::string isa = selected_isa() + (amx_enabled() ? "+amx" : "");
  return isa;
}

QParams ProgramRunner::q_of(const std::string& t) const {
  auto it = prog_.tensors.find(t);
  return it == prog_.tensors.end() ? QParams{} : it->second;
}

std::vector<Tensor> ProgramRunner::run_op(const QOp& op, const std::map<std::string, Tensor>& values,
                                          BufferPool* pool) const {
  try {
    return run_op_unlabeled(op, values, pool);
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.find(op.node.label()) == std::string::npos) fail(op.node.label(), ": ", msg);
    throw;
  }
}

std::vector<Tensor> ProgramRunner::run_op_unlabeled(const QOp& op, const std::map<std::string, Tensor>& values,
                                                    BufferPool* pool) const {
  std::vector<const Tensor*> ins;
  std::vector<Tensor> deq;  // float copies for fallback ops
  deq.reserve(op.node.inputs.size());
  for (size_t i = 0; i < op.node.inputs.size(); ++i) {
    const std::string& in = op.node.inputs[i];
    if (in.empty()) {
      ins.push_back(nullptr);
      continue;
    }
    auto it = values.find(in);
    if (it == values.end()) {
      auto c = op.const_inputs.find(i);  // a constant operand quantized at compile time
      FP_CHECK(c != op.const_inputs.end(), op.node.label(), ": input '", in, "' has no value");
      ins.push_back(&c->second);
      continue;
    }
    QParams q = q_of(in);
    if (op.is<params::Float>() && !q.is_float()) {
      deq.push_back(dequantize_tensor(it->second, q));
      ins.push_back(&deq.back());
    } else {
      ins.push_back(&it->second);
    }
  }
  std::vector<Tensor> outs;
  if (op.is<params::Float>() || op.is<params::Move>()) {
    // The prepared kernel of this program's op (callers may also pass ops of their own).
    int64_t i = index_of(op);
    const PreparedKernel* fast = i >= 0 ? float_kernels_[static_cast<size_t>(i)].get() : nullptr;
    outs = run_node(op.node, ins, fast, threads_, pool);
    if (op.is<params::Float>())
      for (size_t i = 0; i < outs.size(); ++i) {
        QParams q = q_of(op.node.outputs[i]);
        if (!op.node.outputs[i].empty() && !q.is_float() && dtype_is_float(outs[i].dtype()))
          outs[i] = quantize_tensor(outs[i], q, threads_);
      }
  } else {
    outs.resize(op.node.outputs.size());
    qref::QContext ctx{op, ins, {}, {}, outs, threads_, pool};
    for (const auto& in : op.node.inputs) ctx.in_q.push_back(q_of(in));
    for (const auto& o : op.node.outputs) ctx.out_q.push_back(q_of(o));
    int64_t i = index_of(op);
    const xk::PackedWeights* packed = i >= 0 ? packed_[static_cast<size_t>(i)].get() : nullptr;
    if (packed) {
      xk::run_packed(ctx, *packed);
    } else {
      xk::find_runtime_kernel(std::string(op.kind()))(ctx);
    }
  }
  return outs;
}

std::vector<Tensor> ProgramRunner::run_op_on_float(size_t index, const std::map<std::string, Tensor>& float_values) const {
  const QOp& op = prog_.ops.at(index);
  std::map<std::string, Tensor> values;
  for (const auto& in : op.node.inputs) {
    auto it = float_values.find(in);
    if (in.empty() || it == float_values.end()) continue;
    auto q = prog_.tensors.find(in);
    values[in] = q == prog_.tensors.end() || q->second.is_float() ? it->second : quantize_tensor(it->second, q->second);
  }
  for (const auto& [name, t] : prog_.float_constants) values.emplace(name, t);
  return run_op(op, values);
}

ProgramOutputs ProgramRunner::run(const std::map<std::string, Tensor>& inputs,
                                  const std::function<void(const QOp&, const std::vector<Tensor>&)>& on_op,
                                  const std::function<void()>& on_inputs) const {
  return run_ops(0, inputs, {}, on_op, on_inputs);
}

ProgramOutputs ProgramRunner::resume(size_t first, const std::map<std::string, Tensor>& inputs,
                                     std::map<std::string, Tensor> earlier) const {
  FP_CHECK(first <= prog_.ops.size(), "resume: op ", first, " of a program of ", prog_.ops.size(), " ops");
  return run_ops(first, inputs, std::move(earlier), {}, {});
}

ProgramOutputs ProgramRunner::run_ops(size_t first, const std::map<std::string, Tensor>& inputs,
                                      std::map<std::string, Tensor> values,
                                      const std::function<void(const QOp&, const std::vector<Tensor>&)>& on_op,
                                      const std::function<void()>& on_inputs) const {
  check_inputs(prog_.inputs, inputs);
  std::unique_ptr<BufferPool> pool;
  {
    std::lock_guard<std::mutex> lock(pools_mu_);
    if (!pools_.empty()) {
      pool = std::move(pools_.back());
      pools_.pop_back();
    }
  }
  if (!pool) pool = std::make_unique<BufferPool>();
  pool->reclaim();
  const size_t fresh_before = pool->fresh_bytes();
  for (const auto& vi : prog_.inputs) {
    const Tensor& t = inputs.at(vi.name);
    QParams q = q_of(vi.name);
    values[vi.name] = q.is_float() ? t : quantize_tensor(t, q, threads_, pool.get());
  }
  if (on_inputs) on_inputs();
  for (const auto& [name, t] : prog_.float_constants) values[name] = t;
  std::map<std::string, int> readers = readers_;
  for (size_t k = 0; k < first; ++k)  // (ops that do not run do not read)
    for (const auto& in : prog_.ops[k].node.inputs)
      if (auto r = readers.find(in); !in.empty() && r != readers.end()) --r->second;
  size_t live = 0, peak = 0;
  for (size_t k = first; k < prog_.ops.size(); ++k) {
    const QOp& op = prog_.ops[k];
    std::vector<Tensor> outs = run_op(op, values, pool.get());
    if (on_op) on_op(op, outs);
    for (size_t i = 0; i < outs.size(); ++i) {
      if (op.node.outputs[i].empty()) continue;
      live += outs[i].capacity_bytes();
      values[op.node.outputs[i]] = std::move(outs[i]);
    }
    peak = std::max(peak, live);
    // Tensors whose last reader this op was give their storage back (unless the caller's, a
    // constant, or shared with a view that lives on).
    for (const auto& in : op.node.inputs) {
      auto r = readers.find(in);
      if (in.empty() || r == readers.end() || --r->second > 0 || prog_.float_constants.count(in)) continue;
      auto it = values.find(in);
      if (it == values.end()) continue;
      live -= std::min(live, it->second.capacity_bytes());
      pool->give(it->second.release_storage());
      values.erase(it);
    }
  }
  peak_bytes_ = peak;
  ProgramOutputs r;
  std::vector<std::shared_ptr<TensorStorage>> handed;
  for (const auto& vi : prog_.outputs) {
    auto it = values.find(vi.name);
    FP_CHECK(it != values.end(), "graph output '", vi.name, "' was not computed");
    QParams q = q_of(vi.name);
    if (q.is_float()) {
      r.values[vi.name] = it->second;
    } else {
      r.values[vi.name] = dequantize_tensor(it->second, q, threads_, pool.get());
      r.codes[vi.name] = it->second;
      handed.push_back(it->second.shared_storage());
    }
    handed.push_back(r.values[vi.name].shared_storage());
  }
  fresh_bytes_ = pool->fresh_bytes() - fresh_before;
  pool->lend(std::move(handed));
  {
    std::lock_guard<std::mutex> lock(pools_mu_);
    pools_.push_back(std::move(pool));
  }
  return r;
}

}  // namespace fixpoint
