// fixpoint: which instruction set the optimized kernels use, chosen once per process.
//
// FIXPOINT_ISA=reference|scalar|avx2|avx512vnni forces a choice (an unknown value, or one this CPU
// cannot run, is an error); unset, the fastest this CPU supports. "reference" runs the simple
// reference kernels only. Integer and float kernels read the same choice, so one variable switches
// a whole run.
#pragma once
#include <string>

namespace fixpoint {

// True when this CPU can run kernels compiled for `isa` ("scalar" always; "avx2" needs AVX2 and
// FMA; "avx512vnni" needs AVX-512 F, BW and VNNI).
bool cpu_supports(const std::string& isa);

// The ISA of this process: FIXPOINT_ISA if set (validated), else the fastest supported.
const std::string& selected_isa();

}  // namespace fixpoint
