// Reference integer kernels (docs/arithmetic.md §5): pure-integer run steps of ops whose
// constants the compiler prepared. Deliberately simple: codes are widened to int64 on load.
#pragma once
#include <vector>

#include "fixpoint/buffer_pool.h"
#include "fixpoint/fixedpoint.h"
#include "fixpoint/program.h"

namespace fixpoint::qref {

struct QContext {
  const QOp& op;
  std::vector<const Tensor*> in;  // integer codes (or non-float data such as int64 indices)
  std::vector<QParams> in_q, out_q;
  std::vector<Tensor>& out;
  int threads = 1;  // kernels may split independent output channels/rows across threads
  BufferPool* pool = nullptr;  // storage of dead tensors for the outputs (the runtime's)
  // Output i, zero-filled unless the kernel says it writes every element (zero_fill = false);
  // made again, its first storage goes back to the pool (make_output).
  Tensor& output(size_t i, const Shape& s, bool zero_fill = true) {
    return make_output(pool, out.at(i), out_q.at(i).type, s, zero_fill);
  }
};

// A Clamp's [lo, hi] as a code range.
inline fx::Range clamp_range(const params::Clamp& c) { return {c.lo, c.hi}; }

using QKernelFn = void (*)(QContext&);
// The kernel of a program op kind ("conv", "matmul", ...), or nullptr.
QKernelFn find_integer_kernel(const std::string& kind);

// The prepared per-output-channel constants of Conv, ConvTranspose and Gemm/MatMul: the bias
// (11) an accumulator starts from, and RQ (13) with channel c's multiplier into [lo, hi].
// The Weighted params of a Conv, ConvTranspose or MatMul op.
inline const params::Weighted& weighted(const QOp& op) {
  const params::Weighted* p = weighted_params(op.params);
  return p ? *p : op.as<params::MatMul>();  // as<> names the op and its kind when it is neither
}

struct ChannelRequant {
  const int64_t *bias, *mult, *shift;
  fx::Range r;
  int64_t zy;
  bool wide;
  explicit ChannelRequant(const QContext& c)
      : ChannelRequant(weighted(c.op), c.out_q[0].zero_point) {}
  ChannelRequant(const params::Weighted& p, int64_t zero_point)
      : bias(p.bias.data<int64_t>()),
        mult(p.mult.data<int64_t>()),
        shift(p.shift.data<int64_t>()),
        r{p.lo, p.hi},
        zy(zero_point),
        wide(p.wide) {}
  int64_t operator()(int64_t a, int64_t ch) const {
    fx::Multiplier mu{mult[ch], static_cast<int>(shift[ch])};
    return wide ? fx::requantize_wide(a, mu, zy, r) : fx::requantize(a, mu, zy, r);
  }
};

// Calls f(T{}) with the C++ type of an integer code tensor's dtype.
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

// Codes of an integer tensor as int64, minus `zero_point`.
std::vector<int64_t> load_codes(const Tensor& t, int64_t zero_point);
// The weight codes of a Conv/ConvTranspose/MatMul widened to int16 (8-bit weights are stored as int8).
std::vector<int16_t> weight_codes(const params::Weighted& p);
// Writes int64 codes (already saturated to t's range) into t.
void store_codes(Tensor& t, const std::vector<int64_t>& v);

}  // namespace fixpoint::qref
