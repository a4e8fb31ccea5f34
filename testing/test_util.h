// Helpers for building small graphs in tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "fixpoint/ir.h"
#include "fixpoint/runtime.h"

namespace fixpoint::test {

inline Attribute ints_attr(std::vector<int64_t> v) { return Attribute::of_ints(std::move(v)); }
inline Attribute int_attr(int64_t v) { return Attribute::of_int(v); }
inline Attribute float_attr(float v) { return Attribute::of_float(v); }
inline Attribute string_attr(std::string v) { return Attribute::of_string(std::move(v)); }

inline Node make_node(std::string op, std::vector<std::string> in, std::vector<std::string> out, std::string name = "",
                      std::map<std::string, Attribute> attrs = {}, int opset = 13) {
  Node n;
  n.op_type = std::move(op);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.name = name.empty() ? n.op_type + "_" + n.outputs.at(0) : std::move(name);
  n.attrs = std::move(attrs);
  n.opset = opset;
  return n;
}

inline ValueInfo input_info(std::string name, Shape s, DType dt = DType::Float32) {
  ValueInfo v{std::move(name), dt, std::vector<Dim>{}};
  for (int64_t d : s) v.shape->push_back(d < 0 ? Dim::sym("N") : Dim::of(d));
  return v;
}

inline Tensor random_tensor(Shape s, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(DType::Float32, std::move(s));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Runs one node on the given inputs with the reference kernels.
inline Tensor run1(const Node& n, const std::vector<const Tensor*>& ins, size_t out = 0) {
  return run_node(n, ins).at(out);
}

// Rows [r, r+1) of a tensor along axis 0.
inline Tensor row(const Tensor& t, int64_t r) {
  Shape s = t.shape();
  s[0] = 1;
  Tensor o(t.dtype(), s);
  size_t bytes = o.nbytes();
  std::memcpy(o.raw(), static_cast<const char*>(t.raw()) + r * bytes, bytes);
  return o;
}

// max |a - b| relative to the peak |a| (how pass tests judge float rewrites).
inline double max_rel_err(const Tensor& a, const Tensor& b) {
  double peak = 0, err = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    peak = std::max(peak, std::abs(a.get_f64(i)));
    err = std::max(err, std::abs(a.get_f64(i) - b.get_f64(i)));
  }
  return err / std::max(peak, 1e-30);
}

}  // namespace fixpoint::test
