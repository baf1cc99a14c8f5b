#pragma once
// Intrusive reference counting: the count lives in the object, so a Tensor
// handle is one pointer and copying it is one atomic increment.
#include <atomic>
#include <cstdint>
#include <utility>

namespace brasa {

class intrusive_ptr_target {
 public:
  virtual ~intrusive_ptr_target() = default;
  int32_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 private:
  template <class T>
  friend class intrusive_ptr;
  mutable std::atomic<int32_t> refcount_{0};
};

template <class T>
class intrusive_ptr {
 public:
  intrusive_ptr() = default;
  intrusive_ptr(std::nullptr_t) {}
  explicit intrusive_ptr(T* p) : p_(p) { retain(); }
  intrusive_ptr(const intrusive_ptr& o) : p_(o.p_) { retain(); }
  intrusive_ptr(intrusive_ptr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <class U>
  intrusive_ptr(const intrusive_ptr<U>& o) : p_(o.get()) {
    retain();
  }
  ~intrusive_ptr() { release(); }
  intrusive_ptr& operator=(const intrusive_ptr& o) {
    intrusive_ptr(o).swap(*this);
    return *this;
  }
  intrusive_ptr& operator=(intrusive_ptr&& o) noexcept {
    intrusive_ptr(std::move(o)).swap(*this);
    return *this;
  }
  void swap(intrusive_ptr& o) noexcept { std::swap(p_, o.p_); }
  void reset() { intrusive_ptr().swap(*this); }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  int32_t use_count() const { return p_ ? p_->use_count() : 0; }
  bool operator==(const intrusive_ptr& o) const { return p_ == o.p_; }

  // A new reference to *p unless its count already reached zero (it is being
  // destroyed): then null. For caches that hold plain pointers.
  static intrusive_ptr try_retain(T* p) {
    int32_t c = p->refcount_.load(std::memory_order_relaxed);
    while (c > 0)
      if (p->refcount_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) {
        intrusive_ptr r;
        r.p_ = p;
        return r;
      }
    return intrusive_ptr();
  }

  template <class... Args>
  static intrusive_ptr make(Args&&... args) {
    return intrusive_ptr(new T(std::forward<Args>(args)...));
  }

 private:
  void retain() {
    if (p_) p_->refcount_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() {
    if (p_ && p_->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p_;
    p_ = nullptr;
  }
  T* p_ = nullptr;
};

template <class T, class... Args>
intrusive_ptr<T> make_intrusive(Args&&... args) {
  return intrusive_ptr<T>::make(std::forward<Args>(args)...);
}

}  // namespace brasa
