// FNV-1a 64 over bytes, as 16 hex digits: short stable names for what compiles made from (the
// calibrated graph's fingerprint, a rescaled weight's name). Not for security.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace fixpoint {

class Fnv1a {
 public:
  void add(std::string_view bytes) {
    for (unsigned char c : bytes) h_ = (h_ ^ c) * 1099511628211ull;
  }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
    return buf;
  }

 private:
  uint64_t h_ = 1469598103934665603ull;
};

}  // namespace fixpoint
