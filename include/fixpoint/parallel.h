// fixpoint: a minimal parallel-for on one persistent thread pool. Work items are split into
// contiguous blocks, one per thread; every item is computed by exactly the same code whatever the
// thread count, so results are bit-identical for any --threads.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fixpoint {

// Worker threads made once and reused by every parallel region (a thread start costs about as
// much as a small layer). One region at a time: a region that finds the pool busy (another
// caller thread, or a region nested in a worker) runs on threads of its own instead. The caller
// runs slot 0. Between regions a worker spins for a short while (layers follow each other within
// microseconds; a futex wake-up costs tens of them in a VM), then sleeps. The pool is never
// destroyed (workers wait on it until the process exits), and a forked child, which has none of
// its parent's workers, makes its own.
class ThreadPool {
 public:
  static ThreadPool& instance() {
    static std::mutex m;
    static ThreadPool* pool = nullptr;
    std::lock_guard<std::mutex> l(m);
    if (!pool || pool->pid_ != getpid()) pool = new ThreadPool();  // (a parent's pool is left as it is)
    return *pool;
  }
  // Runs job(k) for k in [0, t), job(0) on the calling thread; false (nothing run) when busy.
  bool run(int t, const std::function<void(int)>& job) {
    std::unique_lock<std::mutex> busy(use_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    while (static_cast<int>(workers_.size()) < t - 1) {
      int slot = static_cast<int>(workers_.size()) + 1;
      workers_.emplace_back([this, slot] { work(slot); });
    }
    {
      std::lock_guard<std::mutex> l(m_);
      job_ = &job;
      active_ = t;
      pending_.store(t - 1);
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    job(0);
    if (!spin([this] { return pending_.load() == 0; })) {
      std::unique_lock<std::mutex> l(m_);
      done_.wait(l, [this] { return pending_.load() == 0; });
    }
    return true;
  }

 private:
  ThreadPool() : pid_(getpid()) {}
  // Polls `ready` for up to about 200 microseconds; true as soon as it holds.
  template <typename F>
  static bool spin(F&& ready) {
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    for (int i = 0;; ++i) {
      if (ready()) return true;
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return false;
      __builtin_ia32_pause();
    }
  }
  void work(int slot) {
    uint64_t seen = 0;
    for (;;) {
      if (!spin([&] { return generation_.load() != seen; })) {
        std::unique_lock<std::mutex> l(m_);
        wake_.wait(l, [&] { return generation_.load() != seen; });
      }
      const std::function<void(int)>* job;
      {
        std::lock_guard<std::mutex> l(m_);
        seen = generation_.load();
        if (slot >= active_) continue;  // this region needs fewer workers
        job = job_;
      }
      (*job)(slot);
      if (pending_.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> l(m_);
        done_.notify_one();
      }
    }
  }
  pid_t pid_;
  std::mutex use_, m_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* job_ = nullptr;
  int active_ = 0;
  std::atomic<int> pending_{0};
  std::atomic<uint64_t> generation_{0};
};

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
  std::vector<std::exception_ptr> errors(t);
  std::function<void(int)> block = [&](int k) {
    try {
      for (int64_t i = n * k / t; i < n * (k + 1) / t; ++i) f(i, k);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  if (!ThreadPool::instance().run(t, block)) {
    std::vector<std::thread> own;
    for (int k = 0; k < t; ++k) own.emplace_back(block, k);
    for (auto& th : own) th.join();
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

template <typename F>
void parallel_for(int64_t n, int threads, F&& f) {
  parallel_for_slots(n, threads, [&f](int64_t i, int) { f(i); });
}

// row(lo, hi) over [0, n) in runs of `chunk` elements ([k chunk, min(n, (k + 1) chunk)) for k in
// [0, ceil(n / chunk))), the runs split between threads as parallel_for splits items. For
// element-wise loops whose elements are independent: any split gives the same bits.
template <typename F>
void parallel_for_chunks(int64_t n, int64_t chunk, int threads, F&& row) {
  parallel_for((n + chunk - 1) / chunk, threads, [&](int64_t k) { row(k * chunk, std::min(n, (k + 1) * chunk)); });
}

}  // namespace fixpoint
