// fixpoint: memory for tensors and packed weights. Blocks of at least kHugeBlock bytes come
// straight from mmap, on 2 MiB boundaries and rounded up to whole 2 MiB, with MADV_HUGEPAGE:
// the kernel then maps (and zeroes) them one 2 MiB page per fault instead of 512 pages. On the
// 2-core VMs this runs on, a page fault costs microseconds, and the 4 KiB faults of a program's
// load (its weights copied out of the file, then packed) were about a quarter of a process that
// loads ResNet-18 int8 and runs it once. Smaller blocks come from operator new, aligned to a
// cache line (an AMX tile row that crosses one takes two loads).
#pragma once
#include <cstddef>
#include <new>

namespace fixpoint {

inline constexpr size_t kHugeBlock = size_t{1} << 20;

void* allocate_pages(size_t bytes);          // 64-byte aligned; huge-page backed from kHugeBlock up
void free_pages(void* p, size_t bytes) noexcept;  // `bytes` as given to allocate_pages

template <class T>
struct PageAllocator {
  using value_type = T;
  PageAllocator() = default;
  template <class U>
  PageAllocator(const PageAllocator<U>&) {}
  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocate_pages(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { free_pages(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PageAllocator<U>&) const { return true; }
};

}  // namespace fixpoint
