// The optimized MatMul of two activations (matmul2_fast) against the reference kernel, bit for
// bit, on randomized seeded shapes (batch dims broadcast either way, K up to 300), 8/16-bit code
// types, zero points, multipliers (shifts past 63 too) and clamps, at 1-3 threads. A failure
// names the seed.
#include <gtest/gtest.h>

#include <random>

#include "kernels/x86/elementwise_fast.h"
#include "integer_layer_cases.h"

namespace fixpoint {
namespace {

struct MatMulPair {
  QOp op;
  Tensor a, b;
  QParams qa, qb, qy;
};

MatMulPair random_matmul2(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int64_t M = pick(1, 40), K = pick(1, seed % 5 == 0 ? 300 : 40), N = pick(1, 40), B1 = pick(1, 3), B2 = pick(1, 4);
  Shape sa = {B1, B2, M, K}, sb = {B2, K, N};
  switch (pick(0, 3)) {
    case 0: sb = {1, K, N}; break;          // one B for every batch matrix
    case 1: sa = {B2, M, K}; sb = {B1, B2, K, N}; break;  // A broadcast
    case 2: sa = {M, K}; sb = {K, N}; break;  // plain 2-D
    default: break;
  }
  MatMulPair c;
  test::Case tmp;
  test::Operands in = test::random_operands(sa, sb, rng);
  c.a = in.a;
  c.b = in.b;
  c.qa = in.qa;
  c.qb = in.qb;
  params::MatMul2 p;
  tmp.op.params = p;
  test::set_output(tmp, rng, true);
  c.qy = tmp.qy;
  p = tmp.op.as<params::MatMul2>();
  p.m = pick(int64_t{1} << 29, (int64_t{1} << 31) - 1);
  p.n = pick(0, 3) ? pick(30, 50) : pick(51, 80);
  p.wide = true;
  if (pick(0, 3) == 0) {  // a narrower clamp (a fused Relu/Clip)
    p.lo = std::max<int64_t>(p.lo, c.qy.zero_point);
    p.hi = std::max<int64_t>(p.lo, p.hi / 2);
  }
  c.op.params = p;
  c.op.node = test::make_node("MatMul", {"a", "b"}, {"y"}, cat("matmul2_seed_", seed));
  return c;
}

Tensor run(MatMulPair& c, bool fast, int threads) {
  std::vector<Tensor> out(1);
  qref::QContext ctx{c.op, {&c.a, &c.b}, {c.qa, c.qb}, {c.qy}, out, threads};
  if (fast) EXPECT_TRUE(xk::matmul2_fast(ctx)) << c.op.node.label();
  else qref::find_integer_kernel("matmul2")(ctx);
  return out[0];
}

TEST(Matmul2Fast, MatchesTheReferenceBitExactlyAtAnyThreadCount) {
  for (uint32_t seed = 0; seed < 150; ++seed) {
    MatMulPair c = random_matmul2(seed);
    Tensor want = run(c, false, 1);
    for (int threads : {1, 2, 3}) {
      Tensor got = run(c, true, threads);
      ASSERT_EQ(shape_str(want.shape()), shape_str(got.shape())) << "seed=" << seed;
      ASSERT_EQ(want.dtype(), got.dtype()) << "seed=" << seed;
      std::vector<int64_t> w = qref::load_codes(want, 0), g = qref::load_codes(got, 0);
      for (size_t i = 0; i < w.size(); ++i)
        ASSERT_EQ(w[i], g[i]) << "seed=" << seed << " threads=" << threads << " at flat index " << i << " " << shape_str(c.a.shape())
                              << " x " << shape_str(c.b.shape());
    }
  }
}

}  // namespace
}  // namespace fixpoint
