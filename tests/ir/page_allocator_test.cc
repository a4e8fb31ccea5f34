// Tensor storage and packed weights come from PageAllocator: 64-byte aligned below kHugeBlock,
// whole 2 MiB huge-page-hinted mappings from it up (operator new under AddressSanitizer). Each
// block is usable to its last byte, a vector of it starts zeroed, and a tensor on it keeps its
// values through the buffer pool's reuse.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "fixpoint/buffer_pool.h"
#include "fixpoint/page_allocator.h"
#include "fixpoint/tensor.h"

namespace fixpoint {
namespace {

TEST(PageAllocator, BlocksAreAlignedZeroedAndWholeAroundTheThreshold) {
  for (size_t bytes : {size_t{1}, size_t{4096}, kHugeBlock - 8, kHugeBlock, kHugeBlock + 8, size_t{5} << 20}) {
    std::vector<uint8_t, PageAllocator<uint8_t>> v(bytes);
    const auto addr = reinterpret_cast<uintptr_t>(v.data());
    EXPECT_EQ(addr % 64, 0u) << bytes << " bytes";
#if !defined(__SANITIZE_ADDRESS__)
    if (bytes >= kHugeBlock) {
      EXPECT_EQ(addr % (size_t{2} << 20), 0u) << bytes << " bytes";
    }
#endif
    size_t nonzero = 0;
    for (uint8_t b : v) nonzero += b != 0;
    EXPECT_EQ(nonzero, 0u) << bytes << " bytes";
    std::memset(v.data(), 0xA5, bytes);  // every byte is ours
    EXPECT_EQ(v.front(), 0xA5);
    EXPECT_EQ(v.back(), 0xA5);
  }
}

TEST(PageAllocator, LargeTensorsKeepTheirValuesThroughThePool) {
  const Shape shape{3, 1 << 19};  // 6 MiB of int32: a mapped block
  Tensor t(DType::Int32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(i * 7919);
  Tensor copy = t.clone();
  BufferPool pool;
  pool.give(t.release_storage());
  Tensor again = pool.make(DType::Int32, shape, false);  // the same block, its bytes as left
  ASSERT_EQ(again.nbytes(), copy.nbytes());
  EXPECT_EQ(std::memcmp(again.raw(), copy.raw(), copy.nbytes()), 0);
  Tensor zeroed = pool.make(DType::Int32, shape, true);  // nothing pooled: fresh, zeroed
  for (int64_t i = 0; i < zeroed.numel(); i += 4099) ASSERT_EQ(zeroed.data<int32_t>()[i], 0) << i;
}

}  // namespace
}  // namespace fixpoint
