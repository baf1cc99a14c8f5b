#pragma once
// An optional list of sizes or dims (libtorch's at::OptionalIntArrayRef), for
// arguments where "none given" differs from any list (fft's s and dim,
// linalg::vector_norm's dim): std::nullopt, or a list given as {8, 8}, a
// vector, an IntArrayRef or a single dim. Like IntArrayRef it does not own
// the values: a braced list lives until the end of the call it is written in.
#include <brasa/util/array_ref.h>

#include <initializer_list>
#include <optional>
#include <vector>

namespace brasa {

class OptionalIntArrayRef {
 public:
  OptionalIntArrayRef() = default;
  OptionalIntArrayRef(std::nullopt_t) {}                 // NOLINT: implicit, as libtorch's
  OptionalIntArrayRef(IntArrayRef v) : value_(v) {}      // NOLINT
  OptionalIntArrayRef(std::initializer_list<int64_t> v)  // NOLINT
      : value_(IntArrayRef(v.begin(), v.size())) {}
  OptionalIntArrayRef(const std::vector<int64_t>& v) : value_(IntArrayRef(v)) {}  // NOLINT
  OptionalIntArrayRef(const int64_t& one) : value_(IntArrayRef(one)) {}           // NOLINT
  bool has_value() const { return value_.has_value(); }
  explicit operator bool() const { return has_value(); }
  IntArrayRef operator*() const { return *value_; }
  const IntArrayRef* operator->() const { return &*value_; }
  IntArrayRef value() const { return value_.value(); }
  IntArrayRef value_or(IntArrayRef other) const { return value_ ? *value_ : other; }

 private:
  std::optional<IntArrayRef> value_;
};

}  // namespace brasa
