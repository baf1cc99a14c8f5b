#pragma once
// Insertion-ordered map from names to values (libtorch's OrderedDict):
// items have key() and value(); lookup by key errors clearly when missing.
#include <brasa/util/error.h>

#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace brasa {

template <class Key, class Value>
class OrderedDict {
 public:
  class Item {
   public:
    Item(Key k, Value v) : key_(std::move(k)), value_(std::move(v)) {}
    const Key& key() const { return key_; }
    Value& value() { return value_; }
    const Value& value() const { return value_; }
    Value& operator*() { return value_; }
    Value* operator->() { return &value_; }

   private:
    Key key_;
    Value value_;
  };

  explicit OrderedDict(std::string key_description = "Key") : what_(std::move(key_description)) {}

  // Items live in a deque: references returned by insert stay valid.
  Value& insert(Key key, Value value) {
    BRASA_CHECK(!index_.count(key), what_, " '", key, "' already defined");
    index_[key] = items_.size();
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().value();
  }
  Value& operator[](const Key& key) {
    Value* v = find(key);
    BRASA_CHECK(v, what_, " '", key, "' is not defined");
    return *v;
  }
  const Value& operator[](const Key& key) const {
    return const_cast<OrderedDict*>(this)->operator[](key);
  }
  Value* find(const Key& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const { return const_cast<OrderedDict*>(this)->find(key); }
  bool contains(const Key& key) const { return index_.count(key) > 0; }
  // Removes the item and returns its value; the others keep their order.
  Value erase(const Key& key) {
    auto it = index_.find(key);
    BRASA_CHECK(it != index_.end(), what_, " '", key, "' is not defined");
    const size_t at = it->second;
    Value v = std::move(items_[at].value());
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(at));
    index_.erase(it);
    for (auto& [k, i] : index_)
      if (i > at) --i;
    return v;
  }
  size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  void clear() {
    items_.clear();
    index_.clear();
  }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  std::vector<Key> keys() const {
    std::vector<Key> k;
    for (const auto& i : items_) k.push_back(i.key());
    return k;
  }
  std::vector<Value> values() const {
    std::vector<Value> v;
    for (const auto& i : items_) v.push_back(i.value());
    return v;
  }

 private:
  std::string what_;
  std::deque<Item> items_;
  std::unordered_map<Key, size_t> index_;
};

}  // namespace brasa
