// The fast MaxPool's float plane loop (maxpool_rows.h) compiled for AVX2; only used on CPUs that have it.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "maxpool_rows.h"

namespace {
#include "maxpool_rows_impl.h"
}  // namespace

namespace fixpoint::fk {
const PoolPlaneFn<float> kPoolPlaneF32Avx2 = pool_plane<float>;
}
