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

template <typename F>
void parallel_for(int64_t n, int threads, F&& f) {
  int t = static_cast<int>(std::min<int64_t>(std::max(threads, 1), n));
  if (t <= 1) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(t);
  for (int k = 0; k < t; ++k)
    pool.emplace_back([&, k] {
      try {
        for (int64_t i = n * k / t; i < n * (k + 1) / t; ++i) f(i);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace fixpoint
