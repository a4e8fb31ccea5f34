// Add, Sub, Mul, Div on float32 where one operand is the output's shape and the other broadcasts
// as one block of dims (a scalar, a per-channel vector [C, 1, 1], a trailing row, or the same
// shape): y[o][m][i] = a[o][m][i] op b[m], in plain loops the compiler vectorizes. Each element is
// the same single IEEE operation the reference kernel performs, so the results are the reference's
// bits; other broadcasts (both operands broadcast, opset < 7 'broadcast' attribute) run the
// reference kernel.
#include <algorithm>

#include "../reference/common.h"
#include "fast_float_ops.h"
#include "fixpoint/parallel.h"

namespace fixpoint::fk {
namespace {

enum class BinOp { kAdd, kSub, kMul, kDiv };

// The full operand has shape `full`; `part`, right-aligned, equals `full` on dims [d0, d1) and is
// 1 elsewhere. Sets outer (product of dims before d0), mid and inner (after d1).
bool block_broadcast(const Shape& full, const Shape& part, int64_t& outer, int64_t& mid, int64_t& inner) {
  if (part.size() > full.size()) return false;
  size_t off = full.size() - part.size();
  std::vector<bool> same(full.size(), false);
  for (size_t d = 0; d < full.size(); ++d) {
    int64_t pd = d < off ? 1 : part[d - off];
    if (pd == full[d]) same[d] = true;
    else if (pd != 1) return false;
  }
  // The dims where part equals full and full > 1 must be contiguous; size-1 dims fit anywhere.
  int64_t first = -1, last = -1;
  for (size_t d = 0; d < full.size(); ++d)
    if (full[d] != 1 && same[d]) {
      if (first < 0) first = static_cast<int64_t>(d);
      last = static_cast<int64_t>(d);
    }
  outer = 1, mid = 1, inner = 1;
  if (first < 0) {  // a scalar (every dim 1)
    inner = shape_numel(full);
    return true;
  }
  for (int64_t d = 0; d < static_cast<int64_t>(full.size()); ++d) {
    if (first >= 0 && d >= first && d <= last) {
      if (!same[d]) return false;
      mid *= full[d];
    } else if (first >= 0 && d > last) {
      inner *= full[d];
    } else {
      outer *= full[d];
    }
  }
  return true;
}

template <BinOp op>
inline float apply(float x, float y) {
  if constexpr (op == BinOp::kAdd) return x + y;
  if constexpr (op == BinOp::kSub) return x - y;
  if constexpr (op == BinOp::kMul) return x * y;
  return x / y;
}

// y = full op part (part_first: part op full), part indexed by the middle block.
template <BinOp op>
void run_block(const float* full, const float* part, float* y, int64_t outer, int64_t mid, int64_t inner,
               bool part_first, int threads) {
  if (inner == 1) {  // part is a trailing row: y[o][m] = full[o][m] op part[m]
    int64_t chunk = std::max<int64_t>(1, 16384 / std::max<int64_t>(mid, 1));
    parallel_for((outer + chunk - 1) / chunk, threads, [&](int64_t t) {
      for (int64_t r = t * chunk; r < std::min(outer, (t + 1) * chunk); ++r) {
        const float* f = full + r * mid;
        float* o = y + r * mid;
        if (part_first)
          for (int64_t m = 0; m < mid; ++m) o[m] = apply<op>(part[m], f[m]);
        else
          for (int64_t m = 0; m < mid; ++m) o[m] = apply<op>(f[m], part[m]);
      }
    });
    return;
  }
  int64_t rows = outer * mid;
  int64_t chunk = std::max<int64_t>(1, 16384 / inner);
  parallel_for((rows + chunk - 1) / chunk, threads, [&](int64_t t) {
    for (int64_t r = t * chunk; r < std::min(rows, (t + 1) * chunk); ++r) {
      const float* f = full + r * inner;
      float* o = y + r * inner;
      float b = part[r % mid];
      if (part_first)
        for (int64_t i = 0; i < inner; ++i) o[i] = apply<op>(b, f[i]);
      else
        for (int64_t i = 0; i < inner; ++i) o[i] = apply<op>(f[i], b);
    }
  });
}

template <BinOp op>
void run_same(const float* a, const float* b, float* y, int64_t n, int threads) {
  constexpr int64_t kChunk = 16384;
  parallel_for_chunks(n, kChunk, threads, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) y[i] = apply<op>(a[i], b[i]);
  });
}

template <BinOp op>
class BinaryF32 final : public PreparedKernel {
 public:
  bool run(KernelContext& c) const override {
    if (c.num_inputs() != 2) return false;
    const Tensor& a = c.in(0);
    const Tensor& b = c.in(1);
    if (a.dtype() != DType::Float32 || b.dtype() != DType::Float32) return false;
    if (c.node.opset < 7 && c.node.attr_int("broadcast", 0)) return false;
    const int threads = kElementwiseThreads;
    if (a.shape() == b.shape()) {
      Tensor& y = c.output(0, DType::Float32, a.shape(), false);
      run_same<op>(a.data<float>(), b.data<float>(), y.data<float>(), a.numel(), threads);
      return true;
    }
    int64_t outer, mid, inner;
    bool b_part = block_broadcast(a.shape(), b.shape(), outer, mid, inner);
    if (!b_part && !block_broadcast(b.shape(), a.shape(), outer, mid, inner)) return false;
    const Tensor& full = b_part ? a : b;
    const Tensor& part = b_part ? b : a;
    if (full.numel() == 0) return false;
    Tensor& y = c.output(0, DType::Float32, full.shape(), false);
    run_block<op>(full.data<float>(), part.data<float>(), y.data<float>(), outer, mid, inner, !b_part, threads);
    return true;
  }
};

}  // namespace

void register_elementwise_f32(KernelRegistry& r) {
  r.add_prepared("Add", prepare_stateless<BinaryF32<BinOp::kAdd>>);
  r.add_prepared("Sub", prepare_stateless<BinaryF32<BinOp::kSub>>);
  r.add_prepared("Mul", prepare_stateless<BinaryF32<BinOp::kMul>>);
  r.add_prepared("Div", prepare_stateless<BinaryF32<BinOp::kDiv>>);
}

}  // namespace fixpoint::fk
