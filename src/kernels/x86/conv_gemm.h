// Optimized run steps of 8-bit Conv and Gemm/MatMul: im2col + an ISA GEMM (gemm_s16.h) + the
// reference's own per-channel requantization. Bit-identical to qref's conv/matmul (tested with
// randomized seeded inputs in tests/kernels/x86/conv_gemm_test.cc).
#pragma once
#include "../reference/integer/integer_kernels.h"
#include "gemm_s16.h"

namespace fixpoint::xk {

// True when the op can take the GEMM path: 8-bit codes in, and the sum of products (without the
// bias) provably within int32.
bool gemm_path_applies(const qref::QContext& c);

// Require gemm_path_applies(c).
void conv_s8_gemm(qref::QContext& c, const GemmS16Kernel& k);
void matmul_s8_gemm(qref::QContext& c, const GemmS16Kernel& k);
// ConvTranspose (22): a GEMM per group (weights x transposed input) and an exact col2im.
void conv_transpose_s8_gemm(qref::QContext& c, const GemmS16Kernel& k);

// The kernel the runtime runs for a program op kind: the optimized one of selected_isa() where
// there is one and it applies (else the reference), or the reference one for "reference".
qref::QKernelFn find_runtime_kernel(const std::string& kind);

}  // namespace fixpoint::xk
