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
