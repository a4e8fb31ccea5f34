// Table ops (20), docs/arithmetic.md §5.8.
#include "../common.h"
#include "integer_kernels.h"

namespace fixpoint::qref {

// (20): q_y = TAB[q_x - q_min(T_x)].
void k_lut(QContext& c) {
  const Tensor& x = *c.in[0];
  Tensor& y = c.output(0, x.shape());
  const auto& p = c.op.as<params::Table>();
  std::vector<int64_t> tab = load_codes(p.table, 0);  // output codes, any integer type
  std::vector<int64_t> q = load_codes(x, p.in_lo);
  for (auto& v : q) v = tab.at(static_cast<size_t>(v));
  store_codes(y, q);
}

}  // namespace fixpoint::qref
