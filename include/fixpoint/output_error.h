// fixpoint: a program's graph outputs against the float reference's, pooled over input sets;
// what `analyze` and `--auto-mixed` measure precision choices by.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "fixpoint/compiler.h"
#include "fixpoint/program.h"
#include "fixpoint/tensor.h"

namespace fixpoint {

using OutputSets = std::vector<std::map<std::string, Tensor>>;  // graph outputs (or inputs) per input set

// Runs `p` on every input set (a missing batch dimension is added, as `run` does).
OutputSets run_program(const Program& p, const OutputSets& inputs, int threads);

// The index of the first op of `trial` that may compute something else than `base`'s op at that
// index (its node, fused nodes, width, params, or the encoding of a tensor it reads or writes
// differ); ops before it are the same. For programs compiled from one graph (ModelCompiler).
size_t first_changed_op(const Program& base, const Program& trial);

// Runs trial programs of one graph that differ from a base program in a few late ops (the range
// search changes one tensor's encoding at a time): every tensor of the base program's run on each
// input set is kept (when they fit in max_bytes), and a trial runs from its first changed op
// (ProgramRunner::resume). Gives what run_program gives.
class TrialRuns {
 public:
  TrialRuns(OutputSets inputs, int threads, size_t max_bytes = size_t{2} << 30);
  // Runs `base` on every input set, keeping its tensors; its outputs.
  const OutputSets& set_base(const Program& base);
  OutputSets run(const Program& trial) const;

 private:
  OutputSets inputs_;
  int threads_;
  size_t max_bytes_;
  Program base_;
  OutputSets base_outputs_;
  std::vector<std::map<std::string, Tensor>> kept_;  // per input set: every tensor of the base run (or none)
};

// The options of the many trial compiles a search makes (auto-mixed, range search): `opts`
// without progress lines, with a calibration cache so that every trial calibrates once.
CompileOptions trial_options(const CompileOptions& opts);

// Signal sum ref^2 and noise sum (ref - got)^2 over every output element of every set.
struct OutputError {
  double signal = 0, noise = 0;
  double snr_db() const;  // compare.h's snr_db(signal, noise)
};
OutputError output_error(const OutputSets& ref, const OutputSets& got);

}  // namespace fixpoint
