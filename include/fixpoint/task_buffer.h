// Per-thread buffers for the optimized kernels' per-task temporaries (im2col rows, accumulator
// planes, parity planes; the float kernels' phase planes and panels). A task's buffer of a few hundred KB taken from malloc comes back as
// fresh pages each time (glibc maps and unmaps large blocks, and trims its heaps), and the page
// faults cost more than the arithmetic: on the OCR detector, one depthwise or col2im plane per
// channel. Each call site (Slot: pass __LINE__) keeps one growing buffer per thread, reused from
// task to task and run to run; the pool's threads are persistent (fixpoint/parallel.h).
// Generic code: included only by translation units compiled for the baseline ISA.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

namespace fixpoint {
namespace {  // per translation unit: a Slot (line number) is unique only within its file

// n elements of T for this thread and call site, each set to `fill` (contents undefined when
// fill is not given). Valid until the same call site asks again on this thread.
template <typename T, int Slot>
T* task_buffer(size_t n) {
  thread_local std::vector<T> buf;
  if (buf.size() < n) buf.resize(n);
  return buf.data();
}
template <typename T, int Slot>
T* task_buffer(size_t n, T fill) {
  T* p = task_buffer<T, Slot>(n);
  std::fill_n(p, n, fill);
  return p;
}

}  // namespace
}  // namespace fixpoint
