#include <brasa/util/error.h>

namespace brasa {

static std::string full_message(const std::string& msg, const std::string& cond, const char* file,
                                int line) {
  std::string out = msg;
  if (!cond.empty()) out += "\n  check failed: " + cond;
  out += detail::str("\n  at ", file, ":", line);
  return out;
}

Error::Error(std::string message, std::string condition, const char* file, int line)
    : std::runtime_error(full_message(message, condition, file, line)),
      message_(std::move(message)) {}

namespace detail {
void throw_error(const char* condition, const char* file, int line, std::string msg) {
  throw Error(std::move(msg), condition, file, line);
}
}  // namespace detail
}  // namespace brasa
