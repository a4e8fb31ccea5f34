#include "integer_kernels.h"

namespace fixpoint::qref {
std::vector<int64_t> load_codes(const Tensor& t, int64_t zero_point) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  visit_int(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(p[i]) - zero_point;
  });
  return v;
}

std::vector<int16_t> weight_codes(const params::Weighted& p) {
  std::vector<int16_t> v(static_cast<size_t>(p.weight.numel()));
  visit_int(p.weight.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* w = p.weight.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int16_t>(w[i]);
  });
  return v;
}

void store_codes(Tensor& t, const std::vector<int64_t>& v) {
  visit_int(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(v[i]);
  });
}

}  // namespace fixpoint::qref
