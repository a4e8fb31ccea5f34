// fixpoint: runs a compiled Program exactly as the integer accelerator would.
#pragma once
#include <functional>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "fixpoint/buffer_pool.h"
#include "fixpoint/program.h"
#include "fixpoint/runtime.h"

namespace fixpoint {

namespace xk {
struct PackedWeights;  // src/kernels/x86/conv_gemm.h
}

struct ProgramOutputs {
  std::map<std::string, Tensor> values;  // graph outputs dequantized to float32 (docs/arithmetic.md (6))
  std::map<std::string, Tensor> codes;   // the integer codes of fixed-point graph outputs
};

// docs/arithmetic.md (6) applied to a whole tensor of codes, on storage from `pool` where it
// has some.
Tensor dequantize_tensor(const Tensor& codes, const QParams& q, int threads = 1, BufferPool* pool = nullptr);

class ProgramRunner {
 public:
  explicit ProgramRunner(Program p);
  const Program& program() const { return prog_; }
  // The ISA of the optimized integer kernels, chosen once from the CPU ("scalar", "avx2",
  // "avx512vnni", "avx512vnni+amx": 8-bit convs on AMX tiles, cpu_isa.h amx_enabled()), or
  // "reference" (FIXPOINT_ISA=reference: the scalar reference kernels only). Every choice gives
  // the same bits.
  static const std::string& kernel_isa();
  // Threads for integer kernels; any count gives the same bits.
  void set_threads(int n) { threads_ = n < 1 ? 1 : n; }
  int threads() const { return threads_; }
  // Float inputs are quantized with (5) at their tensors' scales; outputs dequantized with (6).
  // `on_op` (optional) sees each op and its outputs (integer codes for fixed-point tensors);
  // `on_inputs` (optional) is called once the inputs are quantized, before the first op.
  ProgramOutputs run(const std::map<std::string, Tensor>& inputs,
                     const std::function<void(const QOp&, const std::vector<Tensor>&)>& on_op = {},
                     const std::function<void()>& on_inputs = {}) const;

  // run() from op `first` on, for programs that differ from an earlier one only from there
  // (tools that run many trial programs of one model: --range-search): `earlier` holds the
  // tensors ops from `first` on read that ops before it made, as an earlier run's on_op saw
  // them; graph inputs are quantized from `inputs` as run() does. Gives run()'s outputs when
  // ops before `first` are the same as those that made `earlier`.
  ProgramOutputs resume(size_t first, const std::map<std::string, Tensor>& inputs,
                        std::map<std::string, Tensor> earlier) const;

  // One op on the current tensor values (codes for fixed-point tensors, float otherwise);
  // outputs on storage from `pool` where it has some.
  std::vector<Tensor> run_op(const QOp& op, const std::map<std::string, Tensor>& values, BufferPool* pool = nullptr) const;
  // Bytes the last run() held at its peak in tensors of its own (codes, dequantized outputs).
  size_t peak_bytes() const { return peak_bytes_.load(); }
  // Bytes the last run() allocated because its pool had no freed buffer that fitted: after the
  // first run, at most the outputs it handed back (what a run keeps leaves the plan), and none
  // once earlier runs' outputs have been dropped by their caller (BufferPool::lend).
  size_t fresh_bytes() const { return fresh_bytes_.load(); }
  // Op `index` fed with float values of its inputs (e.g. the float reference's), quantized at the
  // inputs' scales: what the op alone does to exact inputs ("local error" in fixpoint compare).
  std::vector<Tensor> run_op_on_float(size_t index, const std::map<std::string, Tensor>& float_values) const;

 private:
  QParams q_of(const std::string& tensor) const;  // float QParams for tensors without codes
  void pack_all_weights();                         // packed_, at construction
  ProgramOutputs run_ops(size_t first, const std::map<std::string, Tensor>& inputs, std::map<std::string, Tensor> values,
                         const std::function<void(const QOp&, const std::vector<Tensor>&)>& on_op,
                         const std::function<void()>& on_inputs) const;
  // run_op without the node's label on errors (run_op adds it once, wherever they come from).
  std::vector<Tensor> run_op_unlabeled(const QOp& op, const std::map<std::string, Tensor>& values, BufferPool* pool) const;
  Program prog_;
  // The buffer plan: how many ops read each tensor (a tensor's storage returns to the run's pool
  // after its last reader; graph outputs never do), and pools kept between runs (one per
  // concurrent run: run() is const and may be called from several threads).
  std::map<std::string, int> readers_;
  mutable std::mutex pools_mu_;
  mutable std::vector<std::unique_ptr<BufferPool>> pools_;
  mutable std::atomic<size_t> peak_bytes_{0}, fresh_bytes_{0};
  int threads_ = 1;
  // Per op: the fast float kernel of a float (CPU fallback) op, prepared once with the program's
  // float constants; null where there is none.
  std::vector<std::shared_ptr<const PreparedKernel>> float_kernels_;
  // Per op: the weights of an integer Conv or Gemm/MatMul packed once for the selected ISA's
  // GEMM; null where the op does not take the optimized GEMM path.
  std::vector<std::shared_ptr<const xk::PackedWeights>> packed_;
  // The index of `op` in the program's ops, or -1 for an op of the caller's own.
  int64_t index_of(const QOp& op) const;
};

}  // namespace fixpoint
