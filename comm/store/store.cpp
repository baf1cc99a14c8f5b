#include "store.h"

#include <cerrno>
#include <cstdlib>

namespace brasa::distributed {

std::vector<Bytes> Store::multi_get(const std::vector<std::string>& keys) {
  std::vector<Bytes> values;
  values.reserve(keys.size());
  for (const auto& k : keys) values.push_back(get(k));
  return values;
}

void Store::multi_set(const std::vector<std::string>& keys, const std::vector<Bytes>& values) {
  BRASA_CHECK(keys.size() == values.size(), "Store.multi_set: ", keys.size(), " keys but ",
              values.size(), " values");
  for (size_t i = 0; i < keys.size(); ++i) set(keys[i], values[i]);
}

namespace detail {

int64_t parse_counter(const char* store, const std::string& key, const Bytes& value) {
  std::string text = to_string(value);
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  BRASA_CHECK(!text.empty() && errno == 0 && *end == '\0', store, ".add: key '", key,
              "' holds a value that is not an integer ('", text.substr(0, 32), "')");
  return v;
}

Bytes format_counter(int64_t value) { return to_bytes(std::to_string(value)); }

int64_t add_to_counter(const char* store, const std::string& key, const Bytes* current,
                       int64_t delta) {
  const int64_t value = current ? parse_counter(store, key, *current) : 0;
  int64_t sum = 0;
  BRASA_CHECK(!__builtin_add_overflow(value, delta, &sum), store, ".add: key '", key, "' holds ",
              value, " and adding ", delta, " would overflow int64");
  return sum;
}

Bytes compare_set_result(const Bytes* current, const Bytes& expected, const Bytes& desired,
                         bool* replace) {
  *replace = false;
  if (!current) {
    if (!expected.empty()) return expected;
    *replace = true;
    return desired;
  }
  if (*current == expected) {
    *replace = true;
    return desired;
  }
  return *current;
}

std::string quote_keys(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "'" : ", '") + k + "'";
  return out;
}

}  // namespace detail
}  // namespace brasa::distributed
