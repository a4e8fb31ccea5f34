// Large blocks on 2 MiB boundaries with MADV_HUGEPAGE (page_allocator.h says why).
#include "fixpoint/page_allocator.h"

#include <sys/mman.h>

#include <cstdint>

namespace fixpoint {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// Under AddressSanitizer every block comes from operator new, so its bounds stay checked.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMapLarge = false;
#else
constexpr bool kMapLarge = true;
#endif

size_t round_up(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

void* allocate_pages(size_t bytes) {
  if (!kMapLarge || bytes < kHugeBlock) return ::operator new(bytes ? bytes : 1, std::align_val_t{64});
  const size_t size = round_up(bytes);
  // Map one huge page more than needed, then unmap the ends so what stays starts on a 2 MiB
  // boundary and is exactly `size` long (free_pages unmaps just that).
  void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t base = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t start = (base + kHugePage - 1) / kHugePage * kHugePage;
  if (start > base) munmap(raw, start - base);
  if (const size_t tail = base + kHugePage - start; tail) munmap(reinterpret_cast<void*>(start + size), tail);
  void* p = reinterpret_cast<void*>(start);
  madvise(p, size, MADV_HUGEPAGE);  // a hint: without transparent huge pages, 4 KiB pages as before
  return p;
}

void free_pages(void* p, size_t bytes) noexcept {
  if (!p) return;
  if (!kMapLarge || bytes < kHugeBlock) {
    ::operator delete(p, std::align_val_t{64});
    return;
  }
  munmap(p, round_up(bytes));
}

}  // namespace fixpoint
