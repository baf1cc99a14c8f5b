#pragma once
// brasa::Error and the BRASA_CHECK family: every user error names the op,
// the offending shapes/dtypes/values and what was expected.
#include <sstream>
#include <stdexcept>
#include <string>

namespace brasa {

class Error : public std::runtime_error {
 public:
  Error(std::string message, std::string condition, const char* file, int line);
  // The message without the source location. what() is the message and
  // "at <file>:<line>" (relative to the source tree).
  const std::string& message() const { return message_; }
  // The condition that failed ("" for BRASA_ERROR), for verbose reports.
  const std::string& condition() const { return condition_; }

 private:
  std::string message_;
  std::string condition_;
};

namespace detail {
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
[[noreturn]] void throw_error(const char* condition, const char* file, int line, std::string msg);
}  // namespace detail

// A C++ type name as the source spells it ("brasa::nn::LinearImpl"), from
// the compiler's mangled one (typeid(...).name()); the mangled name when it
// cannot be demangled.
std::string demangle(const char* mangled);
}  // namespace brasa

#define BRASA_CHECK(cond, ...)                                                                    \
  do {                                                                                            \
    if (__builtin_expect(!(cond), 0))                                                             \
      ::brasa::detail::throw_error(#cond, __FILE__, __LINE__, ::brasa::detail::str(__VA_ARGS__)); \
  } while (0)

#define BRASA_INTERNAL_ASSERT(cond, ...)                                                           \
  do {                                                                                             \
    if (__builtin_expect(!(cond), 0))                                                              \
      ::brasa::detail::throw_error(#cond, __FILE__, __LINE__,                                      \
                                   ::brasa::detail::str("internal assert failed: ", ##__VA_ARGS__, \
                                                        " (please report a bug)"));                \
  } while (0)

#define BRASA_ERROR(...) \
  ::brasa::detail::throw_error("", __FILE__, __LINE__, ::brasa::detail::str(__VA_ARGS__))
