// Reference integer kernels (docs/arithmetic.md §5): pure-integer run steps of ops whose
// constants the compiler prepared. Deliberately simple: codes are widened to int64 on load.
#pragma once
#include <vector>

#include "fixpoint/fixedpoint.h"
#include "fixpoint/program.h"

namespace fixpoint::qref {

struct QContext {
  const QOp& op;
  std::vector<const Tensor*> in;  // integer codes (or non-float data such as int64 indices)
  std::vector<QParams> in_q, out_q;
  std::vector<Tensor>& out;
  int threads = 1;  // kernels may split independent output channels/rows across threads
  Tensor& output(size_t i, const Shape& s) { return out.at(i) = Tensor(out_q.at(i).type, s); }
};

using QKernelFn = void (*)(QContext&);
// The kernel of a program op kind ("conv", "matmul", ...), or nullptr.
QKernelFn find_integer_kernel(const std::string& kind);

// Codes of an integer tensor as int64, minus `zero_point`.
std::vector<int64_t> load_codes(const Tensor& t, int64_t zero_point);
// Writes int64 codes (already saturated to t's range) into t.
void store_codes(Tensor& t, const std::vector<int64_t>& v);

}  // namespace fixpoint::qref
