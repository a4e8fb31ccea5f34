// Chooses the float microkernel table once, from the ISA of this process (fixpoint/cpu_isa.h).
#include "f32_kernels.h"
#include "fixpoint/cpu_isa.h"

namespace fixpoint::fk {

const F32Kernels* const* available_f32_kernels(int* count) {
  static const F32Kernels* tables[3];
  static const int n = [] {
    int k = 0;
    tables[k++] = &kF32Scalar;
    if (cpu_supports("avx2")) tables[k++] = &kF32Avx2;
    if (cpu_supports("avx512vnni")) tables[k++] = &kF32Avx512;  // its float part: AVX-512F
    return k;
  }();
  *count = n;
  return tables;
}

const F32Kernels* selected_f32_kernels() {
  static const F32Kernels* k = [] () -> const F32Kernels* {
    const std::string& isa = selected_isa();
    if (isa == "reference") return nullptr;
    if (isa == "scalar") return &kF32Scalar;
    if (isa == "avx2") return &kF32Avx2;
    return &kF32Avx512;  // avx512vnni (which implies AVX-512F)
  }();
  return k;
}

}  // namespace fixpoint::fk
