#pragma once
// PrefixStore: a view of another store in which every key is "prefix/key",
// so that several users (process groups) share one store without clashes.

#include <brasa/comm/store/store.h>

namespace brasa::distributed {

class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);

  void set(const std::string& key, const Bytes& value) override { store_->set(join(key), value); }
  // Waits with this store's timeout, not the underlying one's.
  Bytes get(const std::string& key) override {
    store_->wait({join(key)}, timeout_);
    return store_->get(join(key));
  }
  int64_t add(const std::string& key, int64_t delta) override {
    return store_->add(join(key), delta);
  }
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override {
    return store_->compare_set(join(key), expected, desired);
  }
  bool check(const std::vector<std::string>& keys) override { return store_->check(join(keys)); }
  bool delete_key(const std::string& key) override { return store_->delete_key(join(key)); }
  // The keys of the underlying store (c10d does the same).
  int64_t num_keys() override { return store_->num_keys(); }
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    store_->wait(join(keys), timeout);
  }
  void append(const std::string& key, const Bytes& value) override {
    store_->append(join(key), value);
  }
  std::vector<Bytes> multi_get(const std::vector<std::string>& keys) override {
    store_->wait(join(keys), timeout_);
    return store_->multi_get(join(keys));
  }
  void multi_set(const std::vector<std::string>& keys, const std::vector<Bytes>& values) override {
    store_->multi_set(join(keys), values);
  }
  using Store::set;

  const std::shared_ptr<Store>& underlying_store() const { return store_; }
  std::shared_ptr<Store> getUnderlyingStore() const { return store_; }

 private:
  std::string join(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> join(const std::vector<std::string>& keys) const;

  std::string prefix_;
  std::shared_ptr<Store> store_;
};

}  // namespace brasa::distributed
