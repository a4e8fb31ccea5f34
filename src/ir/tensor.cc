#include "fixpoint/tensor.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <limits>

namespace fixpoint {

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 112) << 23 | mant << 13;
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0);
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: inf
  if (ax < 0x38800000u) {                        // subnormal or zero in half
    float a = std::bit_cast<float>(ax);
    // a * 2^24 rounded to nearest even gives the subnormal mantissa.
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  uint32_t mant_odd = (ax >> 13) & 1u;
  ax += 0xc8000fffu + mant_odd;  // rebias exponent (-112<<23) and round to nearest even
  return sign | static_cast<uint16_t>(ax >> 13);
}

float bf16_to_float(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t float_to_bf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    FP_CHECK(d >= 0, "negative dimension ", d, " in shape");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) fail("shape ", shape_str(s), " is too large");
    n *= d;
  }
  return n;
}

std::string shape_str(const Shape& s) {
  if (s.empty()) return "scalar";
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
  return r;
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = shape_numel(shape_);
  FP_CHECK(numel_ <= (int64_t{1} << 34), "tensor of shape ", shape_str(shape_), " is too large (", numel_, " elements)");
  if (dtype_ == DType::String) {
    strings_ = std::make_shared<std::vector<std::string>>(numel_);
    storage_ = std::make_shared<TensorStorage>(0);
  } else {
    storage_ = std::make_shared<TensorStorage>((nbytes() + 7) / 8);
  }
}

Tensor Tensor::adopt(DType dtype, Shape shape, std::shared_ptr<TensorStorage> storage) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = shape_numel(t.shape_);
  t.storage_ = std::move(storage);
  size_t words = (t.nbytes() + 7) / 8;
  if (t.storage_->size() < words) t.storage_->resize(words);
  return t;
}

Tensor Tensor::view(DType dtype, Shape shape, const void* data, std::shared_ptr<const void> keep) {
  FP_CHECK(dtype != DType::String, "a string tensor cannot be a view");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = shape_numel(t.shape_);
  FP_CHECK(reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) == 0, "a tensor view must be aligned to its dtype");
  t.view_ = t.numel_ ? data : nullptr;
  t.keep_ = t.numel_ ? std::move(keep) : nullptr;
  if (!t.view_) t.storage_ = std::make_shared<TensorStorage>(0);
  return t;
}

void Tensor::own_copy() {
  storage_ = std::make_shared<TensorStorage>((nbytes() + 7) / 8);
  std::memcpy(storage_->data(), view_, nbytes());
  view_ = nullptr;
  keep_.reset();
}

Tensor Tensor::reshaped(Shape s) const {
  FP_CHECK(shape_numel(s) == numel_, "cannot reshape ", shape_str(shape_), " to ", shape_str(s));
  Tensor t = *this;
  t.shape_ = std::move(s);
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = *this;
  if (view_) t.own_copy();
  else if (storage_) t.storage_ = std::make_shared<TensorStorage>(*storage_);
  if (strings_) t.strings_ = std::make_shared<std::vector<std::string>>(*strings_);
  return t;
}

Tensor scaled_channels(const Tensor& t, const std::vector<double>& factors, bool divide) {
  if (t.rank() < 2 || t.dim(1) != static_cast<int64_t>(factors.size()) || !dtype_is_float(t.dtype()) || t.numel() == 0)
    return t;
  Tensor r(DType::Float32, t.shape());
  int64_t C = t.dim(1), inner = t.numel() / (t.dim(0) * C);
  float* p = r.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    double f = factors[static_cast<size_t>((i / inner) % C)];
    p[i] = static_cast<float>(divide ? t.get_f64(i) / f : t.get_f64(i) * f);
  }
  return r;
}

double Tensor::get_f64(int64_t i) const {
  switch (dtype_) {
    case DType::Float32: return data<float>()[i];
    case DType::Float64: return data<double>()[i];
    case DType::Float16: return half_to_float(data<uint16_t>()[i]);
    case DType::BFloat16: return bf16_to_float(data<uint16_t>()[i]);
    case DType::UInt8: return data<uint8_t>()[i];
    case DType::Int8: return data<int8_t>()[i];
    case DType::UInt16: return data<uint16_t>()[i];
    case DType::Int16: return data<int16_t>()[i];
    case DType::Int32: return data<int32_t>()[i];
    case DType::Int64: return static_cast<double>(data<int64_t>()[i]);
    case DType::UInt32: return data<uint32_t>()[i];
    case DType::UInt64: return static_cast<double>(data<uint64_t>()[i]);
    case DType::Bool: return data<uint8_t>()[i] ? 1.0 : 0.0;
    default: fail("tensor of dtype ", dtype_name(dtype_), " has no numeric value");
  }
}

int64_t Tensor::get_i64(int64_t i) const {
  switch (dtype_) {
    case DType::Int64: return data<int64_t>()[i];
    case DType::Int32: return data<int32_t>()[i];
    case DType::UInt64: return static_cast<int64_t>(data<uint64_t>()[i]);
    default: return static_cast<int64_t>(get_f64(i));
  }
}

void Tensor::set_f64(int64_t i, double v) {
  switch (dtype_) {
    case DType::Float32: data<float>()[i] = static_cast<float>(v); break;
    case DType::Float64: data<double>()[i] = v; break;
    case DType::Float16: data<uint16_t>()[i] = float_to_half(static_cast<float>(v)); break;
    case DType::BFloat16: data<uint16_t>()[i] = float_to_bf16(static_cast<float>(v)); break;
    case DType::UInt8: data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
    case DType::Int8: data<int8_t>()[i] = static_cast<int8_t>(v); break;
    case DType::UInt16: data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
    case DType::Int16: data<int16_t>()[i] = static_cast<int16_t>(v); break;
    case DType::Int32: data<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::Int64: data<int64_t>()[i] = static_cast<int64_t>(v); break;
    case DType::UInt32: data<uint32_t>()[i] = static_cast<uint32_t>(v); break;
    case DType::UInt64: data<uint64_t>()[i] = static_cast<uint64_t>(v); break;
    case DType::Bool: data<uint8_t>()[i] = v != 0.0; break;
    default: fail("cannot store a number in a tensor of dtype ", dtype_name(dtype_));
  }
}

std::vector<int64_t> Tensor::to_i64_vector() const {
  std::vector<int64_t> v(numel_);
  for (int64_t i = 0; i < numel_; ++i) v[i] = get_i64(i);
  return v;
}

std::vector<float> Tensor::to_f32_vector() const {
  std::vector<float> v(numel_);
  for (int64_t i = 0; i < numel_; ++i) v[i] = static_cast<float>(get_f64(i));
  return v;
}

Tensor Tensor::scalar_f32(float v) {
  Tensor t(DType::Float32, {});
  t.data<float>()[0] = v;
  return t;
}

Tensor Tensor::from_i64(const std::vector<int64_t>& v, Shape shape) {
  Tensor t(DType::Int64, std::move(shape));
  FP_CHECK(static_cast<int64_t>(v.size()) == t.numel(), "from_i64: size mismatch");
  std::memcpy(t.raw(), v.data(), v.size() * 8);
  return t;
}

Tensor Tensor::from_f32(const std::vector<float>& v, Shape shape) {
  Tensor t(DType::Float32, std::move(shape));
  FP_CHECK(static_cast<int64_t>(v.size()) == t.numel(), "from_f32: size mismatch");
  std::memcpy(t.raw(), v.data(), v.size() * 4);
  return t;
}

bool bit_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == DType::String) {
    for (int64_t i = 0; i < a.numel(); ++i)
      if (a.strings()[i] != b.strings()[i]) return false;
    return true;
  }
  return a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

NonFinite count_nonfinite(const Tensor& t) {
  NonFinite r;
  if (!dtype_is_float(t.dtype())) return r;
  if (t.dtype() == DType::Float32) {  // a loop the compiler vectorizes
    const float* p = t.data<float>();
    const float inf = std::numeric_limits<float>::infinity();
    int64_t nan = 0, infs = 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      nan += p[i] != p[i];
      infs += std::fabs(p[i]) == inf;
    }
    r.nan = nan;
    r.inf = infs;
    return r;
  }
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get_f64(i);
    if (std::isnan(v)) ++r.nan;
    else if (std::isinf(v)) ++r.inf;
  }
  return r;
}

std::string NonFinite::text() const {
  return std::to_string(nan) + " NaN and " + std::to_string(inf) + " Inf value(s)";
}

}  // namespace fixpoint
