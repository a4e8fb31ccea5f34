// The ISA choice shared by the integer and float kernels (cpu_isa.h).
#include "fixpoint/cpu_isa.h"

#include <cstdlib>

#include "fixpoint/error.h"

namespace fixpoint {

bool cpu_supports(const std::string& isa) {
  if (isa == "scalar") return true;
  __builtin_cpu_init();
  if (isa == "avx2") return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == "avx512vnni")
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni");
  return false;
}

const std::string& selected_isa() {
  static const std::string isa = [] {
    const char* env = std::getenv("FIXPOINT_ISA");
    if (!env || !*env) {
      for (const char* i : {"avx512vnni", "avx2"})
        if (cpu_supports(i)) return std::string(i);
      return std::string("scalar");
    }
    std::string want = env;
    FP_CHECK(want == "reference" || cpu_supports(want), "FIXPOINT_ISA=", want,
             ": not one of reference, scalar, avx2, avx512vnni that this CPU supports");
    return want;
  }();
  return isa;
}

}  // namespace fixpoint
