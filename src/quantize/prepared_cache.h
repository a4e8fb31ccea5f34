// What prepare steps made, kept for later compiles of the same graph (ModelCompiler: analyze,
// --auto-mixed, --range-search compile one model tens of times, and each trial changes one or
// two tensors' encodings). An entry is found by everything its value was made from (the layer,
// and the encodings, weight scales or codes it read), so a compile gives the same program with
// or without the cache; it only skips recomputing what an earlier compile already made.
#pragma once
#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fixpoint/error.h"
#include "fixpoint/program.h"

namespace fixpoint {

class PreparedCache {
 public:
  // A key part naming an encoding exactly (the scale's bits, not a rounded print).
  static std::string key_of(const QParams& q) {
    return cat(static_cast<int>(q.type), ':', std::bit_cast<uint64_t>(q.scale), ':', q.zero_point, q.onnx_rounding ? "o" : "");
  }
  static std::string key_of(const std::vector<double>& v) {  // the values' bytes
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
  }

  // The value stored under `key`, or make()'s (then stored). make runs without the lock: two
  // threads may both make a value for a new key (the same one), and one is kept.
  template <class T>
  std::shared_ptr<const T> get(const std::string& key, const std::function<T()>& make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end()) return std::static_pointer_cast<const T>(it->second);
    }
    auto v = std::make_shared<const T>(make());
    std::lock_guard<std::mutex> lock(mu_);
    return std::static_pointer_cast<const T>(entries_.emplace(key, v).first->second);
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const void>> entries_;
};

// make() through cache when there is one: prepare steps call this with their CompileContext's
// `prepared` (null in a plain compile).
template <class T>
std::shared_ptr<const T> prepared_value(PreparedCache* cache, const std::string& key, const std::function<T()>& make) {
  return cache ? cache->get<T>(key, make) : std::make_shared<const T>(make());
}

}  // namespace fixpoint
