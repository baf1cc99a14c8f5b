#include <brasa/util/error.h>

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
}  // namespace brasa
