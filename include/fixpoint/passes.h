// fixpoint: graph passes. One pass per file pair in src/passes; each returns how many nodes it
// changed and appends human-readable lines to a log.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "fixpoint/ir.h"

namespace fixpoint {

struct PassLog {
  std::vector<std::string> lines;
  void add(std::string line) { lines.push_back(std::move(line)); }
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

// Folds an inference BatchNormalization into the Conv that feeds it (weights and bias).
std::unique_ptr<Pass> make_fuse_conv_batchnorm();

// x * Clip(x + 3, 0, 6) / 6 and x * HardSigmoid(x; 1/6, 1/2) -> HardSwish(x).
std::unique_ptr<Pass> make_fuse_hardswish();
// ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add over the last axis -> LayerNormalization.
std::unique_ptr<Pass> make_fuse_layernorm();
// Div(x, constant) -> Mul(x, 1 / constant).
std::unique_ptr<Pass> make_div_by_constant();

class PassManager {
 public:
  void add(std::unique_ptr<Pass> p) { passes_.push_back(std::move(p)); }
  // Runs all passes repeatedly until none changes anything (at most `max_rounds` rounds).
  PassLog run(Graph& g, int max_rounds = 8) const;
  // identity elimination, constant folding, dead node elimination.
  static PassManager standard();

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

}  // namespace fixpoint
