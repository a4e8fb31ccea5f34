// fixpoint: storage of dead tensors kept for new outputs, so a run allocates (and the OS maps
// and zeroes pages) only where no freed buffer fits: the runtimes' buffer plan.
#pragma once
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "fixpoint/tensor.h"

namespace fixpoint {

class BufferPool {
 public:
  // A buffer of at least `bytes` (best fit; never more than 4x too large), or null.
  std::shared_ptr<TensorStorage> take(size_t bytes) {
    size_t words = (bytes + 7) / 8;
    auto it = free_.lower_bound(words);
    if (it == free_.end() || it->first > 4 * words + 64) return nullptr;
    auto buf = std::move(it->second);
    free_.erase(it);
    bytes_ -= buf->size() * 8;
    return buf;
  }
  // Keeps `buf` if nothing else holds it.
  void give(std::shared_ptr<TensorStorage> buf) {
    if (!buf || buf.use_count() != 1 || buf->empty()) return;
    bytes_ += buf->size() * 8;
    free_.emplace(buf->size(), std::move(buf));
  }
  // A tensor on pooled storage when one fits (contents undefined unless zero_fill), else new
  // zeroed storage.
  Tensor make(DType dtype, const Shape& shape, bool zero_fill) {
    if (dtype != DType::String) {
      auto buf = take(static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype));
      if (buf) {
        Tensor t = Tensor::adopt(dtype, shape, std::move(buf));
        if (zero_fill && t.nbytes()) std::memset(t.raw(), 0, t.nbytes());
        return t;
      }
    }
    Tensor t(dtype, shape);
    fresh_ += t.capacity_bytes();
    return t;
  }
  // Storage a run hands to its caller (its outputs). Once the caller has dropped it, reclaim()
  // takes it back for a later run instead of that run allocating fresh pages, which the OS
  // maps and zeroes on first touch: the OCR recognizer's outputs (0.3 MB of codes, 1 MB of
  // floats) made a process's first runs 1.6x slower until glibc's malloc moved its mmap
  // threshold. Only the last kLentRuns runs' outputs are watched, so a caller that keeps every
  // result does not make the pool hold them all when it drops them.
  static constexpr size_t kLentRuns = 2;
  void lend(std::vector<std::shared_ptr<TensorStorage>> run_outputs) {
    lent_.push_back(std::move(run_outputs));
    if (lent_.size() > kLentRuns) lent_.pop_front();
  }
  // At a run's start: lent storage nothing else holds any more comes back to the pool.
  void reclaim() {
    for (auto& run : lent_)
      for (auto& buf : run)
        if (buf && buf.use_count() == 1) give(std::move(buf));
  }
  size_t free_bytes() const { return bytes_; }
  // Bytes allocated because no kept buffer fitted (make and Scratch), since the pool was made.
  size_t fresh_bytes() const { return fresh_; }
  void count_fresh(size_t bytes) { fresh_ += bytes; }
  void clear() {
    free_.clear();
    lent_.clear();
    bytes_ = 0;
  }

 private:
  std::multimap<size_t, std::shared_ptr<TensorStorage>> free_;
  std::deque<std::vector<std::shared_ptr<TensorStorage>>> lent_;
  size_t bytes_ = 0, fresh_ = 0;
};

// An op's output `slot` made for (dtype, shape): on pooled storage when one fits (contents
// undefined unless zero_fill), else new zeroed storage. Storage the slot already held goes back
// to the pool first: a path that makes an output again (a fast kernel handing the op to another
// that makes its own) had dropped it, a fresh zeroed allocation on every run (OCR det int8's
// depthwise layers: 21 MB a run).
inline Tensor& make_output(BufferPool* pool, Tensor& slot, DType dtype, const Shape& shape, bool zero_fill) {
  if (!pool) return slot = Tensor(dtype, shape);
  pool->give(slot.release_storage());
  return slot = pool->make(dtype, shape, zero_fill);
}

// Scratch storage for n elements of T, taken from `pool` (null: allocated) and given back to it
// when done, so a kernel's whole-layer temporaries are reused from run to run. Contents
// undefined. Not thread-safe: make and drop it on the thread that runs the op.
template <typename T>
class Scratch {
 public:
  Scratch(BufferPool* pool, size_t n) : pool_(pool) {
    size_t bytes = n * sizeof(T);
    if (pool_) buf_ = pool_->take(bytes);
    if (!buf_) {
      buf_ = std::make_shared<TensorStorage>((bytes + 7) / 8);
      if (pool_) pool_->count_fresh(buf_->size() * 8);
    }
  }
  ~Scratch() {
    if (pool_ && buf_) pool_->give(std::move(buf_));
  }
  Scratch(Scratch&& o) noexcept : pool_(o.pool_), buf_(std::move(o.buf_)) { o.pool_ = nullptr; }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* data() { return reinterpret_cast<T*>(buf_->data()); }

 private:
  BufferPool* pool_;
  std::shared_ptr<TensorStorage> buf_;
};

}  // namespace fixpoint
