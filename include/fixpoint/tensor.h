// fixpoint: dense tensors (dtype + shape + contiguous C-order storage).
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fixpoint/dtype.h"
#include "fixpoint/error.h"
#include "fixpoint/page_allocator.h"

namespace fixpoint {

// The bytes of a tensor, as 8-byte words on 64-byte boundaries (large ones on huge pages:
// page_allocator.h).
using TensorStorage = std::vector<uint64_t, PageAllocator<uint64_t>>;

// IEEE half and bfloat16 conversions (round to nearest even).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f);

// Strong 16-bit storage types so templates can tell them apart from uint16_t.
struct Half { uint16_t bits; };
struct BF16 { uint16_t bits; };

using Shape = std::vector<int64_t>;
int64_t shape_numel(const Shape& s);
std::string shape_str(const Shape& s);  // "1x3x224x224", "scalar" for rank 0

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape);  // zero-initialized

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_.at(i < 0 ? i + rank() : i); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }
  bool empty_storage() const { return !storage_ && !view_; }

  template <typename T>
  T* data() { return reinterpret_cast<T*>(raw()); }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(raw()); }
  void* raw() {
    if (view_) own_copy();  // a view is read-only: writing goes to a copy (copy on write)
    return storage_ ? storage_->data() : nullptr;
  }
  const void* raw() const { return view_ ? view_ : storage_ ? storage_->data() : nullptr; }
  std::string* strings() { return strings_ ? strings_->data() : nullptr; }
  const std::string* strings() const { return strings_ ? strings_->data() : nullptr; }

  // Same storage viewed with another shape of equal element count.
  Tensor reshaped(Shape s) const;
  // Deep copy.
  Tensor clone() const;

  // Element i converted to double / int64 regardless of dtype (slow; for attributes, indices, tests).
  double get_f64(int64_t i) const;
  int64_t get_i64(int64_t i) const;
  void set_f64(int64_t i, double v);
  std::vector<int64_t> to_i64_vector() const;
  std::vector<float> to_f32_vector() const;

  static Tensor scalar_f32(float v);
  static Tensor from_i64(const std::vector<int64_t>& v, Shape shape);
  static Tensor from_f32(const std::vector<float>& v, Shape shape);

  // A read-only view of `data` (numel * dtype size bytes, aligned to the dtype) that `keep`
  // keeps alive: inputs without a copy (Python's Program.run on numpy arrays). Const access
  // reads `data`; the first non-const access copies it into storage of the tensor's own.
  static Tensor view(DType dtype, Shape shape, const void* data, std::shared_ptr<const void> keep);
  bool is_view() const { return view_ != nullptr; }

  // Reuse the storage of a dead tensor (runtime buffer pool); contents undefined.
  static Tensor adopt(DType dtype, Shape shape, std::shared_ptr<TensorStorage> storage);
  std::shared_ptr<TensorStorage> release_storage() { return std::move(storage_); }
  // The storage, shared (null for views and strings): the runtime watches the outputs it hands
  // back through this, to reuse them once their last holder drops them (BufferPool::lend).
  std::shared_ptr<TensorStorage> shared_storage() const { return storage_; }
  size_t capacity_bytes() const { return storage_ ? storage_->size() * 8 : 0; }

 private:
  DType dtype_ = DType::Undefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<TensorStorage> storage_;
  std::shared_ptr<std::vector<std::string>> strings_;
  const void* view_ = nullptr;       // Tensor::view: borrowed memory, kept alive by keep_
  std::shared_ptr<const void> keep_;
  void own_copy();
};

// Bitwise equality of dtype, shape and contents.
bool bit_equal(const Tensor& a, const Tensor& b);

// NaN and +-Inf elements of a float tensor (zero for other dtypes), docs/arithmetic.md §2.8.
struct NonFinite {
  int64_t nan = 0, inf = 0;
  int64_t total() const { return nan + inf; }
  NonFinite& operator+=(const NonFinite& o) {
    nan += o.nan;
    inf += o.inf;
    return *this;
  }
  std::string text() const;  // "2 NaN and 1 Inf value(s)"
};
NonFinite count_nonfinite(const Tensor& t);

// A float32 copy of t (channels on axis 1) with channel c multiplied by factors[c], or divided by
// it: between a model's units and a program's for a tensor channel equalization rescaled
// (Program::channel_factors). t unchanged when its channel count is not factors.size().
Tensor scaled_channels(const Tensor& t, const std::vector<double>& factors, bool divide = false);

}  // namespace fixpoint
