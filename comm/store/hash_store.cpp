#include "hash_store.h"

#include <algorithm>

namespace brasa::distributed {

void HashStore::set(const std::string& key, const Bytes& value) {
  std::lock_guard<std::mutex> lock(mu_);
  data_[key] = value;
  changed_.notify_all();
}

void HashStore::wait_locked(std::unique_lock<std::mutex>& lock,
                            const std::vector<std::string>& keys, std::chrono::milliseconds timeout,
                            const char* op) {
  auto all_present = [&] {
    return std::all_of(keys.begin(), keys.end(), [&](const auto& k) { return data_.count(k) > 0; });
  };
  if (timeout == kNoTimeout) {
    changed_.wait(lock, all_present);
    return;
  }
  if (!changed_.wait_for(lock, timeout, all_present)) {
    std::vector<std::string> missing;
    for (const auto& k : keys)
      if (!data_.count(k)) missing.push_back(k);
    BRASA_DIST_THROW(DistTimeoutError, "HashStore.", op, ": timed out after ", timeout.count(),
                     " ms waiting for key(s) ", detail::quote_keys(missing));
  }
}

Bytes HashStore::get(const std::string& key) {
  std::unique_lock<std::mutex> lock(mu_);
  wait_locked(lock, {key}, timeout_, "get");
  return data_[key];
}

int64_t HashStore::add(const std::string& key, int64_t delta) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = data_.find(key);
  const int64_t value =
      detail::add_to_counter("HashStore", key, it == data_.end() ? nullptr : &it->second, delta);
  data_[key] = detail::format_counter(value);
  changed_.notify_all();
  return value;
}

Bytes HashStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = data_.find(key);
  bool replace = false;
  Bytes result = detail::compare_set_result(it == data_.end() ? nullptr : &it->second, expected,
                                            desired, &replace);
  if (replace) {
    data_[key] = desired;
    changed_.notify_all();
  }
  return result;
}

bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::all_of(keys.begin(), keys.end(), [&](const auto& k) { return data_.count(k) > 0; });
}

bool HashStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  return data_.erase(key) > 0;
}

int64_t HashStore::num_keys() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(data_.size());
}

void HashStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  wait_locked(lock, keys, timeout, "wait");
}

void HashStore::append(const std::string& key, const Bytes& value) {
  std::lock_guard<std::mutex> lock(mu_);
  Bytes& v = data_[key];
  v.insert(v.end(), value.begin(), value.end());
  changed_.notify_all();
}

}  // namespace brasa::distributed
