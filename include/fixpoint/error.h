// fixpoint: one error type for everything the library reports to a user.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace fixpoint {

// Every user-facing failure is an Error whose what() is one line that names the
// file, node, tensor or option at fault. The CLI prints it and exits non-zero.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

// Concatenates its arguments with operator<< (g++ 12 has no <format>).
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

template <typename... Args>
[[noreturn]] void fail(const Args&... args) {
  throw Error(cat(args...));
}

// Check a condition that depends on user data (model, inputs, options).
#define FP_CHECK(cond, ...)                  \
  do {                                       \
    if (!(cond)) ::fixpoint::fail(__VA_ARGS__); \
  } while (0)

}  // namespace fixpoint
