// The modes every OpErrorBounds test (tests/kernels/integer/<kind>_test.cc) runs in.
#include "op_bounds.h"

namespace fixpoint::bounds {

INSTANTIATE_TEST_SUITE_P(Bits, OpErrorBounds, ::testing::Values(Mode{8, false}, Mode{16, false}, Mode{8, true}));

}  // namespace fixpoint::bounds
