#include "registry.h"

namespace fixpoint {

const KernelRegistry& KernelRegistry::reference() {
  static const KernelRegistry reg = [] {
    KernelRegistry r;
#define FIXPOINT_CALL_REGISTER(name) ref::register_##name(r);
    FIXPOINT_REFERENCE_KERNEL_FILES(FIXPOINT_CALL_REGISTER)
#undef FIXPOINT_CALL_REGISTER
    return r;
  }();
  return reg;
}

}  // namespace fixpoint
