#pragma once
// A vector with inline room for N elements: tensor sizes and strides live here
// so that creating a tensor of up to 6 dims allocates nothing for its shape.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>

namespace brasa {

template <class T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivial types only");

 public:
  SmallVector() = default;
  explicit SmallVector(size_t n, T v = T()) { resize(n, v); }
  SmallVector(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  template <class It, std::enable_if_t<!std::is_integral_v<It>, int> = 0>
  SmallVector(It b, It e) {
    assign(b, e);
  }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  ~SmallVector() {
    if (data_ != inline_) delete[] data_;
  }

  template <class It>
  void assign(It b, It e) {
    size_t n = static_cast<size_t>(std::distance(b, e));
    reserve(n);
    std::copy(b, e, data_);
    size_ = n;
  }
  void reserve(size_t n) {
    if (n <= cap_) return;
    T* nd = new T[n];
    std::copy(data_, data_ + size_, nd);
    if (data_ != inline_) delete[] data_;
    data_ = nd;
    cap_ = n;
  }
  void resize(size_t n, T v = T()) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = v;
    size_ = n;
  }
  void push_back(T v) {
    if (size_ == cap_) reserve(cap_ * 2);
    data_[size_++] = v;
  }
  void insert(size_t pos, T v) {
    push_back(v);
    std::rotate(data_ + pos, data_ + size_ - 1, data_ + size_);
  }
  void erase(size_t pos) {
    std::copy(data_ + pos + 1, data_ + size_, data_ + pos);
    --size_;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  bool operator==(const SmallVector& o) const {
    return size_ == o.size_ && std::equal(begin(), end(), o.begin());
  }

 private:
  T inline_[N];
  T* data_ = inline_;
  size_t size_ = 0;
  size_t cap_ = N;
};

}  // namespace brasa
