#include <brasa/util/error.h>

#include <cxxabi.h>

#include <cstdlib>

namespace brasa {

Error::Error(std::string message, std::string condition, const char* file, int line)
    : std::runtime_error(detail::str(message, "\n  at ", file, ":", line)),
      message_(std::move(message)),
      condition_(std::move(condition)) {}

namespace detail {
void throw_error(const char* condition, const char* file, int line, std::string msg) {
  throw Error(std::move(msg), condition, file, line);
}
}  // namespace detail

std::string demangle(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) return mangled;
  std::string s(d);
  std::free(d);
  return s;
}
}  // namespace brasa
