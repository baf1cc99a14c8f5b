#pragma once
// ArrayRef<T>: a non-owning view of contiguous elements (libtorch's c10::ArrayRef).
// IntArrayRef is what shape-taking functions accept: {2, 3}, a vector, sizes().
#include <brasa/util/small_vector.h>

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

namespace brasa {

template <class T>
class ArrayRef {
 public:
  ArrayRef() = default;
  ArrayRef(const T& one) : data_(&one), size_(1) {}
  ArrayRef(const T* data, size_t n) : data_(data), size_(n) {}
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}
  template <size_t N>
  ArrayRef(const SmallVector<T, N>& v) : data_(v.data()), size_(v.size()) {}
  // Points into the list's array, which lives until the end of the full
  // expression: fine for arguments like view({2, 3}), wrong to store.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  ArrayRef(std::initializer_list<T> il) : data_(il.begin()), size_(il.size()) {}
#pragma GCC diagnostic pop

  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool equals(ArrayRef o) const {
    if (size_ != o.size_) return false;
    for (size_t i = 0; i < size_; ++i)
      if (!(data_[i] == o.data_[i])) return false;
    return true;
  }
  bool operator==(ArrayRef o) const { return equals(o); }
  ArrayRef slice(size_t start, size_t n) const { return ArrayRef(data_ + start, n); }
  ArrayRef slice(size_t start) const { return ArrayRef(data_ + start, size_ - start); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

using IntArrayRef = ArrayRef<int64_t>;
using DimVector = SmallVector<int64_t, 6>;

template <class T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> a) {
  os << "[";
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << "]";
}
template <class T, size_t N>
std::ostream& operator<<(std::ostream& os, const SmallVector<T, N>& v) {
  return os << ArrayRef<T>(v);
}

}  // namespace brasa
