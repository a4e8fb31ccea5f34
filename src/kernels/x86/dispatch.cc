// Chooses the integer GEMM once, from the CPU's features (gemm_s16.h).
#include <cstdlib>

#include "fixpoint/error.h"
#include "gemm_s16.h"

namespace fixpoint::xk {
namespace {

bool cpu_has(const std::string& isa) {
  if (isa == "scalar") return true;
  __builtin_cpu_init();
  if (isa == "avx2") return __builtin_cpu_supports("avx2");
  if (isa == "avx512vnni")
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
  return false;
}

}  // namespace

std::vector<const GemmS16Kernel*> available_gemm_s16() {
  std::vector<const GemmS16Kernel*> r;
  for (const GemmS16Kernel* k : {&kGemmS16Scalar, &kGemmS16Avx2, &kGemmS16Avx512Vnni})
    if (cpu_has(k->isa)) r.push_back(k);
  return r;
}

const GemmS16Kernel* gemm_s16_for(const std::string& isa) {
  for (const GemmS16Kernel* k : available_gemm_s16())
    if (isa == k->isa) return k;
  return nullptr;
}

const std::string& selected_isa() {
  static const std::string isa = [] {
    const char* env = std::getenv("FIXPOINT_ISA");
    if (!env || !*env) return std::string(available_gemm_s16().back()->isa);
    std::string want = env;
    FP_CHECK(want == "reference" || gemm_s16_for(want), "FIXPOINT_ISA=", want,
             ": not one of reference, scalar, avx2, avx512vnni that this CPU supports");
    return want;
  }();
  return isa;
}

const GemmS16Kernel* selected_gemm_s16() {
  static const GemmS16Kernel* k = selected_isa() == "reference" ? nullptr : gemm_s16_for(selected_isa());
  return k;
}

}  // namespace fixpoint::xk
