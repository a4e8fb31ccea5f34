// fixpoint: NumPy .npy files (format 1.0-3.0, little-endian, C order).
#pragma once
#include <string>

#include "fixpoint/tensor.h"

namespace fixpoint {

// Reads float16/32/64, int8/16/32/64, uint8/16/32/64 and bool arrays in C order.
// Throws an Error naming the file on anything else (Fortran order, big-endian, objects, truncation).
Tensor load_npy(const std::string& path);
Tensor parse_npy(const std::string& bytes, const std::string& origin);
void save_npy(const std::string& path, const Tensor& t);
std::string serialize_npy(const Tensor& t);
// The file name (without ".npy") a tensor is written under: characters outside
// [A-Za-z0-9._-] become '_' (and "", ".", ".." get a leading '_').
std::string sanitize_name(const std::string& tensor);

}  // namespace fixpoint
