// fixpoint: graph passes. One pass per file pair in src/passes; each returns how many nodes it
// changed and appends human-readable lines to a log.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fixpoint/ir.h"

namespace fixpoint {

struct PassLog {
  // One rewrite: which pass, what it did, and the ONNX nodes it changed or removed.
  struct Entry {
    std::string pass, detail;
    std::vector<std::string> nodes;
  };
  std::vector<std::string> lines;  // readable, in order
  std::vector<Entry> entries;      // the same for tools (compile_report.json "rewrites")
  void add(std::string line, std::vector<std::string> nodes = {}) {
    entries.push_back({"", line, std::move(nodes)});
    lines.push_back(std::move(line));
  }
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  // Rewrites `g`; returns the number of nodes changed/removed/added.
  virtual int run(Graph& g, PassLog& log) = 0;
};

// Removes Identity nodes and inference-mode Dropout (consumers read the input instead).
std::unique_ptr<Pass> make_identity_elimination();
// Evaluates nodes whose inputs are all constants (and Shape of statically shaped tensors),
// replacing them by initializers. Shape arithmetic chains collapse once shapes are known.
std::unique_ptr<Pass> make_constant_folding();
// Removes nodes whose outputs nobody reads and initializers nobody uses.
std::unique_ptr<Pass> make_dead_node_elimination();

// Folds an inference BatchNormalization into the Conv/ConvTranspose that feeds it.
std::unique_ptr<Pass> make_fuse_conv_batchnorm();
std::unique_ptr<Pass> make_batchnorm_to_depthwise();

// x * Clip(x + 3, 0, 6) / 6 and x * HardSigmoid(x; 1/6, 1/2) -> HardSwish(x).
std::unique_ptr<Pass> make_fuse_hardswish();
// ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add over the last axis -> LayerNormalization.
std::unique_ptr<Pass> make_fuse_layernorm();
// Div(x, constant) -> Mul(x, 1 / constant).
std::unique_ptr<Pass> make_div_by_constant();
// Pow(x, c) with a constant scalar c: 2 -> Mul(x, x), 0.5 -> Sqrt(x), 1 -> x, -1 -> Reciprocal(x).
std::unique_ptr<Pass> make_rewrite_pow();
// x * 0.5 * (1 + Erf(x / sqrt(2))) in its exported orders -> Gelu(x).
std::unique_ptr<Pass> make_fuse_gelu();
// Clip(x + 3, 0, 6) / 6 (not multiplied by x) -> HardSigmoid(x; 1/6, 1/2).
std::unique_ptr<Pass> make_fuse_hardsigmoid();
// Mul/Add/Sub by per-output-channel constants after a Conv/ConvTranspose -> its weights and
// bias; Mul (any padding) / Add (no padding) by per-input-channel constants before a Conv -> the
// Conv's weights and bias.
std::unique_ptr<Pass> make_fold_conv_affine();
// Conv over a channel Concat read by nothing else -> one Conv per Concat input (weights split
// by input channel, bias on the first) and an Add chain of their outputs.
std::unique_ptr<Pass> make_split_concat_conv();
// Reshape/Flatten/Squeeze/Unsqueeze chains ending in a constant Reshape collapse to one
// Reshape; Transpose pairs compose; identity Transposes and no-op Reshapes disappear.
std::unique_ptr<Pass> make_simplify_reshape_transpose();

// The encodings an imported QDQ model fixes (fold_qdq.cc).
struct QdqParams {
  struct Activation {
    double scale;
    int64_t zero_point;
    DType type;  // uint8, int8, uint16 or int16
  };
  struct Weight {
    std::vector<double> scales;  // one, or one per slice along `axis`
    int64_t axis;
    DType type;
  };
  std::map<std::string, Activation> activations;  // float tensor -> encoding of its Q/DQ pair
  std::map<std::string, Weight> weights;          // float weight (a DequantizeLinear output) -> scales
};
// The scales of DequantizeLinear on constant symmetric integer weights, by the DequantizeLinear
// output (the float weight constant folding makes of it). Run on the imported graph.
std::map<std::string, QdqParams::Weight> qdq_weights(const Graph& g);
// Removes QuantizeLinear -> DequantizeLinear pairs with equal per-tensor scale and zero point
// (readers of the DequantizeLinear output read the QuantizeLinear input, which the pair's
// encoding is recorded for). Run after the standard passes, right before the compile-time ones.
std::map<std::string, QdqParams::Activation> fold_qdq_pairs(Graph& g, PassLog& log);

class PassManager {
 public:
  void add(std::unique_ptr<Pass> p) { passes_.push_back(std::move(p)); }
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }
  // Runs all passes repeatedly until none changes anything (at most `max_rounds` rounds).
  PassLog run(Graph& g, int max_rounds = 8) const;
  // identity elimination, constant folding, dead node elimination.
  static PassManager standard();
  // The compile-time rewrites (docs/partitioning.md): standard() plus every fusion and
  // simplification above, in an order where each one's output feeds the next.
  static PassManager compile_time(const std::vector<std::string>& disabled = {});

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

}  // namespace fixpoint
