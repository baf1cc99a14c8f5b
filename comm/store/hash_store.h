#pragma once
// HashStore: a Store inside one process (threads share it).

#include <brasa/comm/store/store.h>

#include <condition_variable>
#include <map>
#include <mutex>

namespace brasa::distributed {

class HashStore : public Store {
 public:
  explicit HashStore(std::chrono::milliseconds timeout = kDefaultTimeout) : Store(timeout) {}

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  void append(const std::string& key, const Bytes& value) override;
  using Store::set;

 private:
  void wait_locked(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys,
                   std::chrono::milliseconds timeout, const char* op);

  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, Bytes> data_;
};

}  // namespace brasa::distributed
