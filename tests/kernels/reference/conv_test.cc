// Conv / ConvTranspose / Gemm / MatMul reference kernels against an independent naive formula
// in double, and batch invariance (a batch of N is, row for row, bit-identical to N batch-1 runs).
#include <gtest/gtest.h>

#include "test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

struct ConvCase {
  Shape x, w;
  int64_t group;
  Shape strides, dilations, pads;
};

// y[n,m,oh,ow] = b[m] + sum_{c,kh,kw} x[n, g*cg + c, oh*s - p + kh*d, ...] * w[m, c, kh, kw]
Tensor naive_conv(const Tensor& x, const Tensor& w, const Tensor& b, const ConvCase& cc) {
  int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), M = w.dim(0), KH = w.dim(2), KW = w.dim(3);
  int64_t cg = C / cc.group, mg = M / cc.group;
  int64_t OH = (H + cc.pads[0] + cc.pads[2] - ((KH - 1) * cc.dilations[0] + 1)) / cc.strides[0] + 1;
  int64_t OW = (W + cc.pads[1] + cc.pads[3] - ((KW - 1) * cc.dilations[1] + 1)) / cc.strides[1] + 1;
  Tensor y(DType::Float32, {N, M, OH, OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b.get_f64(m);
          int64_t g = m / mg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t ih = oh * cc.strides[0] - cc.pads[0] + kh * cc.dilations[0];
                int64_t iw = ow * cc.strides[1] - cc.pads[1] + kw * cc.dilations[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += x.get_f64(((n * C + g * cg + c) * H + ih) * W + iw) * w.get_f64(((m * cg + c) * KH + kh) * KW + kw);
              }
          y.set_f64(((n * M + m) * OH + oh) * OW + ow, acc);
        }
  return y;
}

TEST(ConvReference, MatchesNaiveFormulaOnRandomCases) {
  const std::vector<ConvCase> cases = {
      {{2, 3, 9, 8}, {4, 3, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {{1, 4, 10, 10}, {4, 1, 3, 3}, 4, {2, 2}, {1, 1}, {1, 1, 1, 1}},   // depthwise, stride 2
      {{3, 2, 11, 7}, {6, 1, 3, 2}, 2, {1, 2}, {2, 1}, {2, 0, 1, 1}},    // groups, dilation, asym pads
      {{2, 8, 5, 5}, {16, 8, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}},    // pointwise
      {{1, 1, 6, 6}, {1, 1, 5, 5}, 1, {3, 3}, {1, 1}, {2, 2, 2, 2}},
  };
  uint32_t seed = 42;
  for (const auto& cc : cases) {
    SCOPED_TRACE(cat("case x=", shape_str(cc.x), " w=", shape_str(cc.w), " seed=", seed));
    Tensor x = test::random_tensor(cc.x, seed++), w = test::random_tensor(cc.w, seed++),
           b = test::random_tensor({cc.w[0]}, seed++);
    Node n = make_node("Conv", {"x", "w", "b"}, {"y"}, "conv",
                       {{"group", test::int_attr(cc.group)}, {"strides", test::ints_attr(cc.strides)},
                        {"dilations", test::ints_attr(cc.dilations)}, {"pads", test::ints_attr(cc.pads)}});
    Tensor y = test::run1(n, {&x, &w, &b});
    Tensor ref = naive_conv(x, w, b, cc);
    ASSERT_EQ(y.shape(), ref.shape());
    // float accumulation of at most 72 products of |v| <= 1: error well below 1e-5.
    for (int64_t i = 0; i < y.numel(); ++i) ASSERT_NEAR(y.get_f64(i), ref.get_f64(i), 1e-5) << "element " << i;
    // batch invariance
    for (int64_t r = 0; r < cc.x[0]; ++r) {
      Tensor xr = test::row(x, r);
      EXPECT_TRUE(bit_equal(test::row(y, r), test::run1(n, {&xr, &w, &b}))) << "row " << r;
    }
  }
}

TEST(ConvReference, SameUpperAutoPadKeepsSize) {
  Tensor x = test::random_tensor({1, 2, 7, 7}, 5), w = test::random_tensor({3, 2, 3, 3}, 6);
  Node n = make_node("Conv", {"x", "w"}, {"y"}, "conv",
                     {{"auto_pad", test::string_attr("SAME_UPPER")}, {"strides", test::ints_attr({2, 2})}});
  EXPECT_EQ(test::run1(n, {&x, &w}).shape(), (Shape{1, 3, 4, 4}));
}

TEST(ConvTransposeReference, IsTheAdjointOfConv) {
  // <conv(x), y> == <x, convT(y)> for the same weights (stride 2, pads 1): checks the scatter
  // indices and output size formula together.
  Tensor x = test::random_tensor({1, 3, 8, 8}, 7), w = test::random_tensor({4, 3, 3, 3}, 8);
  std::map<std::string, Attribute> attrs = {{"strides", test::ints_attr({2, 2})}, {"pads", test::ints_attr({1, 1, 1, 1})}};
  Tensor cx = test::run1(make_node("Conv", {"x", "w"}, {"y"}, "c", attrs), {&x, &w});  // 1x4x4x4
  Tensor y = test::random_tensor(cx.shape(), 9);
  attrs["output_padding"] = test::ints_attr({1, 1});
  Tensor ty = test::run1(make_node("ConvTranspose", {"y", "w"}, {"z"}, "t", attrs), {&y, &w});
  ASSERT_EQ(ty.shape(), x.shape());
  double lhs = 0, rhs = 0;
  for (int64_t i = 0; i < cx.numel(); ++i) lhs += cx.get_f64(i) * y.get_f64(i);
  for (int64_t i = 0; i < x.numel(); ++i) rhs += x.get_f64(i) * ty.get_f64(i);
  EXPECT_NEAR(lhs, rhs, 1e-4 * std::abs(lhs) + 1e-5);
}

TEST(GemmReference, MatchesNaiveAndIsBatchInvariant) {
  Tensor a = test::random_tensor({5, 7}, 11), b = test::random_tensor({3, 7}, 12), c = test::random_tensor({3}, 13);
  Node n = make_node("Gemm", {"a", "b", "c"}, {"y"}, "gemm",
                     {{"transB", test::int_attr(1)}, {"alpha", test::float_attr(0.5f)}, {"beta", test::float_attr(2.0f)}});
  Tensor y = test::run1(n, {&a, &b, &c});
  ASSERT_EQ(y.shape(), (Shape{5, 3}));
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < 7; ++k) acc += a.get_f64(i * 7 + k) * b.get_f64(j * 7 + k);
      EXPECT_NEAR(y.get_f64(i * 3 + j), 0.5 * acc + 2.0 * c.get_f64(j), 1e-5);
    }
    Tensor ai = test::row(a, i);
    EXPECT_TRUE(bit_equal(test::row(y, i), test::run1(n, {&ai, &b, &c}))) << "row " << i;
  }
}

TEST(MatMulReference, BroadcastsBatchDimsAndPromotes1D) {
  Tensor a = test::random_tensor({2, 1, 3, 4}, 21), b = test::random_tensor({3, 4, 5}, 22);
  Node n = make_node("MatMul", {"a", "b"}, {"y"});
  Tensor y = test::run1(n, {&a, &b});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 3, 5}));
  // y[1,2,0,4] = sum_k a[1,0,0,k] * b[2,k,4]
  double acc = 0;
  for (int64_t k = 0; k < 4; ++k) acc += a.get_f64(12 + k) * b.get_f64(2 * 20 + k * 5 + 4);
  EXPECT_NEAR(y.get_f64(((1 * 3 + 2) * 3 + 0) * 5 + 4), acc, 1e-6);
  Tensor v = test::random_tensor({4}, 23);
  EXPECT_EQ(test::run1(n, {&a, &v}).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(test::run1(n, {&v, &b}).shape(), (Shape{3, 5}));
}

}  // namespace
}  // namespace fixpoint
