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

// True when this CPU has the AMX tiles with their int8 dot products (AMX-TILE, AMX-INT8) and the
// kernel lets this process use them (Linux: arch_prctl ARCH_REQ_XCOMP_PERM for the tile data,
// requested here once). AMX is the CPU's own matrix engine: 16 x 16 int32 tiles of exact u8 x s8
// sums, the same sums as vpdpbusd in a different order (exact int32, so the same bits).
bool cpu_has_amx_int8();

// Whether the 8-bit convs of this process run on AMX tiles: on the "avx512vnni" ISA of a CPU
// that has them, unless FIXPOINT_AMX=0 (FIXPOINT_AMX=1 requires them: an error where absent; any
// other value is an error). Every choice gives the same bits.
bool amx_enabled();

}  // namespace fixpoint
