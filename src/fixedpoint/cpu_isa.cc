// The ISA choice shared by the integer and float kernels (cpu_isa.h).
#include "fixpoint/cpu_isa.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

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

bool cpu_has_amx_int8() {
  static const bool ok = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool tile = d & (1u << 24), int8 = d & (1u << 25);
    if (!tile || !int8) return false;
#if defined(__linux__) && defined(SYS_arch_prctl)
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;  // asm/prctl.h, the tile data state
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
  }();
  return ok;
}

bool amx_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("FIXPOINT_AMX");
    const std::string want = env ? env : "";
    FP_CHECK(want.empty() || want == "0" || want == "1", "FIXPOINT_AMX=", want, ": use 0 (off) or 1 (required)");
    if (want == "0") return false;
    const bool usable = selected_isa() == "avx512vnni" && cpu_has_amx_int8();
    FP_CHECK(want != "1" || usable, "FIXPOINT_AMX=1: this process cannot use AMX tiles (",
             cpu_has_amx_int8() ? "the ISA is " + selected_isa() + ", not avx512vnni" : "the CPU or the OS does not offer them",
             ")");
    return usable;
  }();
  return on;
}

}  // namespace fixpoint
