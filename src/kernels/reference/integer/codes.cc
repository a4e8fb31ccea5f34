#include "integer_kernels.h"

namespace fixpoint::qref {
namespace {


template <typename F>
void visit_int(DType t, F&& f) {
  switch (t) {
    case DType::UInt8: return f(uint8_t{});
    case DType::Int8: return f(int8_t{});
    case DType::UInt16: return f(uint16_t{});
    case DType::Int16: return f(int16_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    default: fail("integer kernel: tensor of dtype ", dtype_name(t), " is not an integer code tensor");
  }
}

}  // namespace

std::vector<int64_t> load_codes(const Tensor& t, int64_t zero_point) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  visit_int(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(p[i]) - zero_point;
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
