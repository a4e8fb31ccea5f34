// Integer GEMM micro-kernels for the optimized Conv/MatMul path (docs/arithmetic.md §4, (14)).
//
//   C[m*ldm + n*ldn] = sum_{k < Kp} A[m*Kp + k] * B[n*Kp + k]        (exact int32)
//
// A holds weight rows, B im2col patch rows (or activation rows), both int16 and zero-padded to
// Kp, a multiple of the kernel's k_align. Only layers with 8-bit activations take this path: the
// activations fit int16 after subtracting the zero point, and the caller checks
// K * max|product| < 2^31, which bounds every partial sum, so any summation order (pairs in madd,
// lanes, tiles) gives the same exact sum as the scalar reference's left-to-right loop. The bias
// is added afterwards in int64.
//
// One implementation per ISA (kernel names carry type, op and ISA), chosen once at start-up
// from the CPU's features; FIXPOINT_ISA=reference|scalar|avx2|avx512vnni overrides the choice.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fixpoint::xk {

struct GemmArgs {
  int64_t M, N, Kp;       // C is M x N; rows of A and B are Kp int16 long
  const int16_t* A;       // M rows
  const int16_t* B;       // N rows
  int32_t* C;
  int64_t ldm, ldn;       // C strides of m and n
};

struct GemmS16Kernel {
  const char* name;  // e.g. "gemm_s16s16s32_avx2"
  const char* isa;   // "scalar", "avx2", "avx512vnni"
  int k_align;       // Kp must be a multiple of this
  void (*run)(const GemmArgs&);
};

// Per-ISA entry points, each defined in its own translation unit compiled for that ISA.
extern const GemmS16Kernel kGemmS16Scalar;
extern const GemmS16Kernel kGemmS16Avx2;
extern const GemmS16Kernel kGemmS16Avx512Vnni;

// The kernels this CPU can run, slowest first ("scalar" always).
std::vector<const GemmS16Kernel*> available_gemm_s16();
// The kernel for `isa` if this CPU can run it, else nullptr.
const GemmS16Kernel* gemm_s16_for(const std::string& isa);

// The GEMM of selected_isa() (fixpoint/cpu_isa.h), or nullptr when it is "reference".
const GemmS16Kernel* selected_gemm_s16();

// The broadcast form on pairs (AVX-512 VNNI only; gemm_bcast_avx512vnni.cc) for 16-bit
// activations taken as byte planes (conv_implicit.cc):
//
//   C[m*ldm + n] = sum_{k < Kp} A[m*Kp + k] * Bq[k/2][2n + k%2]       (exact int32)
//
// A: int16 weight rows of Kp (even) values; Bq: Kp/2 pointers, each to N pairs of int16 (the two
// k of one word for N consecutive outputs); N a multiple of n_align. The caller bounds
// max|B| * sum_block |A| < 2^31 per row (it splits K into blocks and adds the blocks' sums in int64).
struct GemmPairsArgs {
  int64_t M, N, Kp;
  const int16_t* A;
  const int16_t* const* Bq;
  int32_t* C;
  int64_t ldm;
  // B's words lie in planes larger than the caches (Bq's pointers a plane apart, more streams
  // than the hardware prefetchers follow): the kernel prefetches them 16 words ahead. Zero-DCE's
  // 16-bit layers at 384 x 384 0.86-0.93x; where B stays in cache (ResNet-18's 7 x 7 layers) the
  // prefetches cost 3-5%, so the caller says which.
  bool prefetch_b = false;
};

struct GemmPairsKernel {
  const char* name;  // "gemm_s16pairs_s32_avx512vnni"
  const char* isa;
  int n_align;
  void (*run)(const GemmPairsArgs&);
};

extern const GemmPairsKernel kGemmS16PairsAvx512Vnni;
// The pairs kernel for `isa` if there is one and this CPU can run it, else nullptr.
const GemmPairsKernel* gemm_s16_pairs_for(const std::string& isa);

}  // namespace fixpoint::xk
