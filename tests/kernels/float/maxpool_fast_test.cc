// MaxPool on integer codes and float32 (src/kernels/float/maxpool_fast.cc) against the reference
// kernel, bit for bit, on seeded random geometries (1-3 spatial dims, strides, dilations, pads,
// ceil_mode) and element types, with every ISA's plane loops this CPU runs, at 1 and 2 threads;
// floats drawn so that windows meet NaNs of different payloads (the first must win), signed zeros
// (the first must stay) and infinities. It declines the Indices output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "fixpoint/cpu_isa.h"
#include "fixpoint/fixedpoint.h"
#include "fixpoint/runtime.h"
#include "kernels/float/fast_float_ops.h"

namespace fixpoint {
namespace {

// A MaxPool node of the given window.
Node maxpool_node(const std::string& name, const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& dil, const std::vector<int64_t>& pads) {
  Node n;
  n.name = name;
  n.op_type = "MaxPool";
  n.inputs = {"x"};
  n.outputs = {"y"};
  n.attrs["kernel_shape"] = Attribute::of_ints(kernel);
  n.attrs["strides"] = Attribute::of_ints(strides);
  n.attrs["dilations"] = Attribute::of_ints(dil);
  n.attrs["pads"] = Attribute::of_ints(pads);
  return n;
}

// The fast MaxPool with the plane loops of every ISA this CPU can run (a run uses its own ISA's
// only), at 1 and 2 threads, gives the reference kernel's bytes.
void expect_reference_bits(const Node& n, const Tensor& x) {
  std::vector<const Tensor*> ins = {&x};
  Tensor want = run_node(n, ins).at(0);
  for (const char* isa : {"scalar", "avx2", "avx512vnni"}) {
    if (!cpu_supports(isa)) continue;
    auto k = fk::prepare_maxpool_fast_for(n, isa);
    for (int threads : {1, 2}) {
      std::vector<Tensor> outs(1);
      KernelContext ctx(n, ins, outs, nullptr);
      ctx.threads = threads;
      ASSERT_TRUE(k->run(ctx)) << n.name;
      ASSERT_EQ(shape_str(outs[0].shape()), shape_str(want.shape())) << n.name;
      ASSERT_EQ(std::memcmp(outs[0].raw(), want.raw(), want.nbytes()), 0) << n.name << " " << isa << " threads " << threads;
    }
  }
}

TEST(MaxPoolFast, MatchesReferenceBitExactly) {
  uint32_t first = 1, count = 300;
  if (const char* s = std::getenv("FIXPOINT_TEST_SEED")) first = static_cast<uint32_t>(std::strtoul(s, nullptr, 10)), count = 1;
  const DType types[] = {DType::UInt8, DType::Int8, DType::UInt16, DType::Int16, DType::Float32};
  // NaNs with two payloads, signed zeros, infinities and a few ordinary values.
  uint32_t nan_a = 0x7fc00001u, nan_b = 0xffc00002u;
  float special[8] = {0.0f, -0.0f, INFINITY, -INFINITY, 1.5f, -2.25f, 0.0f, 0.0f};
  std::memcpy(&special[6], &nan_a, 4);
  std::memcpy(&special[7], &nan_b, 4);
  for (uint32_t seed = first; seed < first + count; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    int64_t rank = pick(1, 3);
    std::vector<int64_t> kernel, strides, dil, pads(2 * rank);
    Shape xs = {pick(1, 2), pick(1, 4)};
    for (int64_t i = 0; i < rank; ++i) {
      kernel.push_back(pick(1, 4));
      strides.push_back(pick(1, 3));
      dil.push_back(pick(1, 2));
      pads[i] = pick(0, kernel.back() - 1);
      pads[i + rank] = pick(0, kernel.back() - 1);
      xs.push_back(pick(1, rank == 3 ? 6 : 30) + (kernel.back() - 1) * dil.back());
    }
    Node n = maxpool_node(cat("maxpool_seed_", seed), kernel, strides, dil, pads);
    if (pick(0, 3) == 0) n.attrs["ceil_mode"] = Attribute::of_int(1);
    DType t = types[pick(0, 4)];
    Tensor x(t, xs);
    bool sparse_nan = pick(0, 1);
    for (int64_t i = 0; t == DType::Float32 && i < x.numel(); ++i) {
      int64_t j = pick(0, 7);                                        // NaN in a quarter of the elements
      if (sparse_nan && j >= 6 && pick(0, 9) > 0) j = pick(0, 5);  // or in about 2.5%
      x.data<float>()[i] = special[j];
    }
    for (int64_t i = 0; t != DType::Float32 && i < x.numel(); ++i) x.set_f64(i, static_cast<double>(pick(t == DType::Int8 ? -128 : t == DType::Int16 ? -32768 : 0, t == DType::UInt8 ? 255 : t == DType::Int8 ? 127 : t == DType::UInt16 ? 65535 : 32767)));
    expect_reference_bits(n, x);
  }
}

// A 2-D 3 x 3 stride-2 window on 8- and 16-bit codes, leading pads 0 or 1 (ResNet's stem MaxPool;
// the AVX-512 loop of maxpool_codes_avx512.cc): rows 1-40, widths 1-200 (one or several 64-byte
// steps and 32- or 16-output stores, with tails), trailing pads, ceil_mode, codes at the ends of
// the type's range, uint8, int8, uint16 and int16.
TEST(MaxPoolFast, StemWindowOnCodesMatchesReference) {
  uint32_t first = 5000, count = 200;
  if (const char* s = std::getenv("FIXPOINT_TEST_SEED")) first = static_cast<uint32_t>(std::strtoul(s, nullptr, 10)), count = 1;
  for (uint32_t seed = first; seed < first + count; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    Node n = maxpool_node(cat("stem_maxpool_seed_", seed), {3, 3}, {2, 2}, {1, 1},
                          {pick(0, 1), pick(0, 1), pick(0, 1), pick(0, 1)});
    if (pick(0, 3) == 0) n.attrs["ceil_mode"] = Attribute::of_int(1);
    const DType types[] = {DType::Int8, DType::UInt8, DType::Int16, DType::UInt16};
    const DType t = types[pick(0, 3)];
    Tensor x(t, {pick(1, 2), pick(1, 3), pick(3, 40), pick(3, 200)});
    const fx::Range r = fx::range_of(t);
    const int64_t lo = r.lo, hi = r.hi;
    for (int64_t i = 0; i < x.numel(); ++i)
      x.set_f64(i, static_cast<double>(pick(0, 3) == 0 ? (pick(0, 1) ? lo : hi) : pick(lo, hi)));
    expect_reference_bits(n, x);
  }
}

TEST(MaxPoolFast, DeclinesFloat64InputsAndTheIndicesOutput) {
  Node n;
  n.name = "pool";
  n.op_type = "MaxPool";
  n.inputs = {"x"};
  n.outputs = {"y"};
  n.attrs["kernel_shape"] = Attribute::of_ints({2, 2});
  auto k = fk::prepare_maxpool_fast(n, Graph{});
  Tensor xf(DType::Float64, {1, 1, 4, 4}), xq(DType::UInt8, {1, 1, 4, 4});
  std::vector<Tensor> outs(1);
  std::vector<const Tensor*> fin = {&xf};
  KernelContext cf(n, fin, outs, nullptr);
  EXPECT_FALSE(k->run(cf));
  n.outputs = {"y", "idx"};
  std::vector<Tensor> outs2(2);
  std::vector<const Tensor*> qin = {&xq};
  KernelContext cq(n, qin, outs2, nullptr);
  EXPECT_FALSE(k->run(cq));
}

}  // namespace
}  // namespace fixpoint
