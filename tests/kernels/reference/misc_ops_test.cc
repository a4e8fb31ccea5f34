// Small hand-computed cases for ops whose semantics are easy to get subtly wrong.
#include <gtest/gtest.h>

#include "test_util.h"

namespace fixpoint {
namespace {

using test::make_node;

TEST(ResizeReference, LinearHalfPixelMatchesOnnxDocExample) {
  Tensor x = Tensor::from_f32({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor scales = Tensor::from_f32({1, 1, 2, 2}, {4});
  Node n = make_node("Resize", {"x", "", "scales"}, {"y"}, "resize", {{"mode", test::string_attr("linear")}});
  Tensor y = test::run1(n, {&x, nullptr, &scales});
  std::vector<float> want = {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4};
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(y.to_f32_vector(), want);
}

TEST(ResizeReference, NearestAsymmetricFloorUpsample) {
  Tensor x = Tensor::from_f32({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor sizes = Tensor::from_i64({1, 1, 2, 4}, {4});
  Node n = make_node("Resize", {"x", "", "", "sizes"}, {"y"}, "resize",
                     {{"coordinate_transformation_mode", test::string_attr("asymmetric")},
                      {"nearest_mode", test::string_attr("floor")}});
  EXPECT_EQ(test::run1(n, {&x, nullptr, nullptr, &sizes}).to_f32_vector(),
            (std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4}));
}

TEST(SoftmaxReference, Opset11CoercesTo2D) {
  Tensor x = test::random_tensor({2, 3, 4}, 3);
  Node n = make_node("Softmax", {"x"}, {"y"}, "sm", {{"axis", test::int_attr(1)}}, 11);
  Tensor y = test::run1(n, {&x});
  for (int b = 0; b < 2; ++b) {
    double s = 0;
    for (int i = 0; i < 12; ++i) s += y.get_f64(b * 12 + i);
    EXPECT_NEAR(s, 1.0, 1e-6);  // normalized over 3*4 elements, not over axis 1 alone
  }
  Node n13 = make_node("Softmax", {"x"}, {"y"}, "sm", {{"axis", test::int_attr(1)}}, 13);
  Tensor z = test::run1(n13, {&x});
  double s = z.get_f64(0) + z.get_f64(4) + z.get_f64(8);
  EXPECT_NEAR(s, 1.0, 1e-6);
}

TEST(ReduceReference, AxesFromAttributeOrInput) {
  Tensor x = Tensor::from_f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Node attr_form = make_node("ReduceMean", {"x"}, {"y"}, "rm", {{"axes", test::ints_attr({1})}, {"keepdims", test::int_attr(0)}});
  EXPECT_EQ(test::run1(attr_form, {&x}).to_f32_vector(), (std::vector<float>{2, 5}));
  Tensor axes = Tensor::from_i64({0}, {1});
  Node input_form = make_node("ReduceSum", {"x", "axes"}, {"y"}, "rs");
  Tensor y = test::run1(input_form, {&x, &axes});
  EXPECT_EQ(y.shape(), (Shape{1, 3}));
  EXPECT_EQ(y.to_f32_vector(), (std::vector<float>{5, 7, 9}));
  Node all = make_node("ReduceMax", {"x"}, {"y"}, "rmax", {{"keepdims", test::int_attr(0)}});
  EXPECT_EQ(test::run1(all, {&x}).shape(), Shape{});
}

TEST(PadReference, ReflectEdgeConstantAndCrop) {
  Tensor x = Tensor::from_f32({1, 2, 3}, {3});
  Tensor pads = Tensor::from_i64({2, 1}, {2});
  auto pad = [&](const char* mode) {
    return test::run1(make_node("Pad", {"x", "pads"}, {"y"}, "pad", {{"mode", test::string_attr(mode)}}), {&x, &pads})
        .to_f32_vector();
  };
  EXPECT_EQ(pad("constant"), (std::vector<float>{0, 0, 1, 2, 3, 0}));
  EXPECT_EQ(pad("reflect"), (std::vector<float>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(pad("edge"), (std::vector<float>{1, 1, 1, 2, 3, 3}));
  Tensor crop = Tensor::from_i64({-1, 0}, {2});
  EXPECT_EQ(test::run1(make_node("Pad", {"x", "pads"}, {"y"}, "pad"), {&x, &crop}).to_f32_vector(),
            (std::vector<float>{2, 3}));
}

TEST(SliceReference, NegativeStepsAndClamping) {
  Tensor x = Tensor::from_f32({0, 1, 2, 3, 4, 5}, {6});
  auto i64 = [](std::vector<int64_t> v) { return Tensor::from_i64(v, {static_cast<int64_t>(v.size())}); };
  Tensor s = i64({-1}), e = i64({-100}), a = i64({0}), st = i64({-2});
  EXPECT_EQ(test::run1(make_node("Slice", {"x", "s", "e", "a", "st"}, {"y"}), {&x, &s, &e, &a, &st}).to_f32_vector(),
            (std::vector<float>{5, 3, 1}));
  Tensor s2 = i64({1}), e2 = i64({1000});
  EXPECT_EQ(test::run1(make_node("Slice", {"x", "s", "e"}, {"y"}), {&x, &s2, &e2}).to_f32_vector(),
            (std::vector<float>{1, 2, 3, 4, 5}));
}

TEST(ElementwiseReference, BroadcastingAndLegacyBroadcast) {
  Tensor a = test::random_tensor({2, 3, 4}, 1), b = Tensor::from_f32({10, 20, 30}, {3});
  // opset 6: broadcast=1, axis=1 aligns B with A's dim 1
  Node legacy = make_node("Add", {"a", "b"}, {"y"}, "add", {{"broadcast", test::int_attr(1)}, {"axis", test::int_attr(1)}}, 6);
  Tensor y = test::run1(legacy, {&a, &b});
  EXPECT_FLOAT_EQ(static_cast<float>(y.get_f64(1 * 12 + 2 * 4 + 3)), static_cast<float>(a.get_f64(1 * 12 + 2 * 4 + 3)) + 30.0f);
  Tensor c = Tensor::from_f32({1, 2, 3, 4}, {4});
  EXPECT_EQ(test::run1(make_node("Mul", {"a", "c"}, {"y"}), {&a, &c}).shape(), (Shape{2, 3, 4}));
  Tensor bad = Tensor::from_f32({1, 2}, {2});
  EXPECT_THROW(test::run1(make_node("Mul", {"a", "c"}, {"y"}), {&a, &bad}), Error);
}

TEST(ElementwiseReference, ActivationsMatchTheirDefinitions) {
  Tensor x = Tensor::from_f32({-4, -1, -0.25f, 0, 0.5f, 3, 50}, {7});
  auto run = [&](const char* op) { return test::run1(make_node(op, {"x"}, {"y"}), {&x}).to_f32_vector(); };
  std::vector<float> hs = run("HardSwish"), hsg = run("HardSigmoid"), sp = run("Softplus"), sg = run("Sigmoid");
  for (int i = 0; i < 7; ++i) {
    double v = x.get_f64(i);
    EXPECT_NEAR(hs[i], v * std::clamp(v / 6 + 0.5, 0.0, 1.0), 1e-6);
    EXPECT_NEAR(hsg[i], std::clamp(0.2 * v + 0.5, 0.0, 1.0), 1e-6);
    EXPECT_NEAR(sp[i], std::log(std::exp(v) + 1), 1e-5 * std::max(1.0, v));
    EXPECT_NEAR(sg[i], 1 / (1 + std::exp(-v)), 1e-7);
  }
}

TEST(QuantizeLinearReference, RoundsHalfToEvenAndSaturates) {
  Tensor x = Tensor::from_f32({0.5f, 1.5f, 2.5f, -0.5f, 300, -300}, {6});
  Tensor s = Tensor::from_f32({1}, {}), zp(DType::Int8, {});
  Tensor y = test::run1(make_node("QuantizeLinear", {"x", "s", "zp"}, {"y"}), {&x, &s, &zp});
  EXPECT_EQ(y.dtype(), DType::Int8);
  EXPECT_EQ(y.to_i64_vector(), (std::vector<int64_t>{0, 2, 2, 0, 127, -128}));
  Tensor d = test::run1(make_node("DequantizeLinear", {"y", "s", "zp"}, {"z"}), {&y, &s, &zp});
  EXPECT_EQ(d.to_f32_vector(), (std::vector<float>{0, 2, 2, 0, 127, -128}));
}

TEST(KernelErrors, NameTheNode) {
  Tensor x = test::random_tensor({1, 1, 4, 4}, 1), w = test::random_tensor({1, 1, 3, 3}, 2);
  Node n = make_node("Conv", {"x", "w"}, {"y"}, "my_conv", {{"strides", test::ints_attr({0, 1})}});
  try {
    test::run1(n, {&x, &w});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("my_conv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("stride"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fixpoint
