// fixpoint: runs a compiled Program exactly as the integer accelerator would.
#pragma once
#include <map>
#include <string>

#include "fixpoint/program.h"

namespace fixpoint {

struct ProgramOutputs {
  std::map<std::string, Tensor> values;  // graph outputs dequantized to float32 (docs/arithmetic.md (6))
  std::map<std::string, Tensor> codes;   // the integer codes of fixed-point graph outputs
};

class ProgramRunner {
 public:
  explicit ProgramRunner(Program p);
  const Program& program() const { return prog_; }
  // Float inputs are quantized with (5) at their tensors' scales; outputs dequantized with (6).
  ProgramOutputs run(const std::map<std::string, Tensor>& inputs) const;

 private:
  Program prog_;
};

}  // namespace fixpoint
