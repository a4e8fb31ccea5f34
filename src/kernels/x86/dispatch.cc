// Chooses the integer GEMMs once, from the ISA of this process (fixpoint/cpu_isa.h).
#include "fixpoint/cpu_isa.h"
#include "gemm_s16.h"
#include "gemm_u8s8.h"

namespace fixpoint::xk {

std::vector<const GemmS16Kernel*> available_gemm_s16() {
  std::vector<const GemmS16Kernel*> r;
  for (const GemmS16Kernel* k : {&kGemmS16Scalar, &kGemmS16Avx2, &kGemmS16Avx512Vnni})
    if (cpu_supports(k->isa)) r.push_back(k);
  return r;
}

const GemmS16Kernel* gemm_s16_for(const std::string& isa) {
  for (const GemmS16Kernel* k : available_gemm_s16())
    if (isa == k->isa) return k;
  return nullptr;
}

const GemmU8S8Kernel* gemm_u8s8_for(const std::string& isa) {
  for (const GemmU8S8Kernel* k : {&kGemmU8S8Scalar, &kGemmU8S8Avx2, &kGemmU8S8Avx512Vnni})
    if (isa == k->isa && cpu_supports(k->isa)) return k;
  return nullptr;
}

const GemmPairsKernel* gemm_s16_pairs_for(const std::string& isa) {
  const GemmPairsKernel* k = &kGemmS16PairsAvx512Vnni;
  return isa == k->isa && cpu_supports(k->isa) ? k : nullptr;
}

const GemmS16Kernel* selected_gemm_s16() {
  static const GemmS16Kernel* k = selected_isa() == "reference" ? nullptr : gemm_s16_for(selected_isa());
  return k;
}

}  // namespace fixpoint::xk
