// Tensor::view (zero-copy inputs): const access reads the borrowed memory, which the tensor keeps
// alive; the first non-const access copies it (copy on write), so nothing writes to it.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "fixpoint/tensor.h"

namespace fixpoint {
namespace {

TEST(TensorView, ReadsTheBorrowedMemoryAndKeepsItAlive) {
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4, 5, 6});
  const float* p = owner->data();
  Tensor t = Tensor::view(DType::Float32, {2, 3}, p, owner);
  std::weak_ptr<std::vector<float>> alive = owner;
  owner.reset();
  ASSERT_FALSE(alive.expired());  // the view keeps it
  const Tensor& c = t;
  EXPECT_TRUE(t.is_view());
  EXPECT_EQ(c.data<float>(), p);  // no copy
  EXPECT_EQ(c.get_f64(4), 5.0);
  Tensor r = t.reshaped({3, 2});  // views share the memory too
  EXPECT_EQ(static_cast<const Tensor&>(r).data<float>(), p);
  EXPECT_FALSE(t.empty_storage());
  t = Tensor();
  r = Tensor();
  EXPECT_TRUE(alive.expired());  // the last view gone, the owner is released
}

TEST(TensorView, WritingCopiesFirstAndNeverTouchesTheBorrowedMemory) {
  std::vector<int16_t> mem = {7, -3, 12};
  Tensor t = Tensor::view(DType::Int16, {3}, mem.data(), nullptr);
  Tensor shared = t;
  t.data<int16_t>()[1] = 99;  // non-const access: copy on write
  EXPECT_FALSE(t.is_view());
  EXPECT_EQ(mem[1], -3);
  EXPECT_EQ(t.get_f64(1), 99.0);
  EXPECT_EQ(shared.get_f64(1), -3.0);  // other views still read the original
  Tensor c = shared.clone();
  EXPECT_FALSE(c.is_view());
  EXPECT_NE(static_cast<const Tensor&>(c).data<int16_t>(), mem.data());
  EXPECT_TRUE(bit_equal(c, shared));
}

TEST(TensorView, MisalignedMemoryIsRefused) {
  alignas(8) unsigned char buf[16] = {};
  EXPECT_THROW(Tensor::view(DType::Float32, {2}, buf + 1, nullptr), Error);
}

}  // namespace
}  // namespace fixpoint
