// fixpoint: element types (the bottom layer: the arithmetic of docs/arithmetic.md speaks of them).
#pragma once
#include <cstddef>
#include <cstdint>

namespace fixpoint {

// Values equal ONNX TensorProto::DataType so conversion is a cast.
enum class DType : int32_t {
  Undefined = 0,
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Float64 = 11,
  UInt32 = 12,
  UInt64 = 13,
  BFloat16 = 16,
};

size_t dtype_size(DType t);          // bytes per element (String: sizeof(std::string))
const char* dtype_name(DType t);     // "float32", "int64", ...
bool dtype_is_float(DType t);        // f16, bf16, f32, f64
bool dtype_is_valid(int32_t v);

}  // namespace fixpoint
