// fixpoint: the fast float path. A registry with the reference kernels plus prepared float32
// kernels (Conv, Gemm, MatMul: weights packed once, ISA microkernels, threads) where the ISA of
// the process (fixpoint/cpu_isa.h) is not "reference". Every output element is one fma chain in a
// fixed order, so results are the same bits for any batch size, thread count and ISA; they differ
// from the reference kernels (which multiply and add separately) by rounding only
// (docs/performance.md, "Fast float path").
#pragma once
#include "fixpoint/runtime.h"

namespace fixpoint {

// The registry the product runs float graphs with (`fixpoint run MODEL.onnx`, calibration,
// compare, analyze, bias correction). With FIXPOINT_ISA=reference it is the reference registry.
const KernelRegistry& fast_float_kernels();

// The name of the float microkernel table in use ("avx2", "scalar") or "reference".
std::string float_kernel_isa();

}  // namespace fixpoint
