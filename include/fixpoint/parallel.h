// fixpoint: a minimal parallel-for. Work items are split into contiguous blocks, one per thread;
// every item is computed by exactly the same code whatever the thread count, so results are
// bit-identical for any --threads.
#pragma once
#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace fixpoint {

// Threads the float paths use when the caller gives no count: the cores of this machine.
inline int default_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

// The number of workers parallel_for(n, threads, ...) uses (slots 0 .. count - 1).
inline int parallel_slots(int64_t n, int threads) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(std::max(threads, 1), n)));
}

// f(i, slot): slot is the worker running item i, so callers can give each worker its own scratch
// buffer (allocated once per call, reused across that worker's items).
template <typename F>
void parallel_for_slots(int64_t n, int threads, F&& f) {
  int t = parallel_slots(n, threads);
  if (t <= 1) {
    for (int64_t i = 0; i < n; ++i) f(i, 0);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(t);
  for (int k = 0; k < t; ++k)
    pool.emplace_back([&, k] {
      try {
        for (int64_t i = n * k / t; i < n * (k + 1) / t; ++i) f(i, k);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

template <typename F>
void parallel_for(int64_t n, int threads, F&& f) {
  parallel_for_slots(n, threads, [&f](int64_t i, int) { f(i); });
}

}  // namespace fixpoint
