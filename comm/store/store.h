#pragma once
// Store: the key-value service processes use to find each other (c10d's
// Store). Values are bytes; add() keeps a decimal integer. Every operation
// that waits has a timeout and fails with DistTimeoutError when it passes.
// snake_case names are Brasa's; c10d's camelCase spellings are kept as
// aliases so libtorch code ports unchanged.

#include <brasa/comm/errors.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace brasa::distributed {

using Bytes = std::vector<uint8_t>;

inline Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
inline std::string to_string(const Bytes& b) { return std::string(b.begin(), b.end()); }

class Store {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{300000};
  // As a timeout: wait forever.
  static constexpr std::chrono::milliseconds kNoTimeout{0};

  explicit Store(std::chrono::milliseconds timeout = kDefaultTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Waits up to timeout() for the key to exist.
  virtual Bytes get(const std::string& key) = 0;
  // Adds to the integer held by the key (a missing key counts as 0); returns
  // the new value.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // Sets `desired` if the key holds `expected` (or is missing and `expected`
  // is empty); returns the value the key holds afterwards (`expected` when
  // the key is missing and `expected` is not empty).
  virtual Bytes compare_set(const std::string& key, const Bytes& expected,
                            const Bytes& desired) = 0;
  // Whether every key exists, without waiting.
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // Whether the key existed.
  virtual bool delete_key(const std::string& key) = 0;
  virtual int64_t num_keys() = 0;
  // Waits until every key exists; the error names the keys still missing.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  // Appends to the value (creating the key if missing).
  virtual void append(const std::string& key, const Bytes& value) = 0;
  // get/set of several keys; backends may do each in one round trip.
  virtual std::vector<Bytes> multi_get(const std::vector<std::string>& keys);
  virtual void multi_set(const std::vector<std::string>& keys, const std::vector<Bytes>& values);

  void set(const std::string& key, const std::string& value) { set(key, to_bytes(value)); }
  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

  // c10d spellings.
  Bytes compareSet(const std::string& k, const Bytes& e, const Bytes& d) {
    return compare_set(k, e, d);
  }
  bool deleteKey(const std::string& key) { return delete_key(key); }
  int64_t getNumKeys() { return num_keys(); }
  std::vector<Bytes> multiGet(const std::vector<std::string>& keys) { return multi_get(keys); }
  void multiSet(const std::vector<std::string>& k, const std::vector<Bytes>& v) { multi_set(k, v); }
  const std::chrono::milliseconds& getTimeout() const { return timeout_; }
  void setTimeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

 protected:
  std::chrono::milliseconds timeout_;
};

namespace detail {
// The integer add() keeps in a value; the error names the store and key.
int64_t parse_counter(const char* store, const std::string& key, const Bytes& value);
Bytes format_counter(int64_t value);
// current + delta (current: the key's value, or null when unset), an error
// when it overflows.
int64_t add_to_counter(const char* store, const std::string& key, const Bytes* current,
                       int64_t delta);
// The rule of compare_set on a map-like store: returns the new value and
// whether `current` must be replaced by it.
Bytes compare_set_result(const Bytes* current, const Bytes& expected, const Bytes& desired,
                         bool* replace);
// "'a', 'b'" for error messages.
std::string quote_keys(const std::vector<std::string>& keys);
}  // namespace detail

}  // namespace brasa::distributed
