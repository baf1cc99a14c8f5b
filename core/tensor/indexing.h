#pragma once
// x.index({Slice(1, None), 0, None, Ellipsis, mask}) — libtorch's TensorIndex.
#include <brasa/tensor/tensor.h>

#include <optional>
#include <string>

namespace brasa::indexing {

constexpr std::nullopt_t None = std::nullopt;
struct EllipsisIndexType {};
constexpr EllipsisIndexType Ellipsis{};

struct Slice {
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start(start), stop(stop), step(step) {}
  std::optional<int64_t> start, stop, step;
};

enum class TensorIndexType { None, Ellipsis, Integer, Boolean, Slice, Tensor };

class TensorIndex {
 public:
  TensorIndex(std::nullopt_t) : type_(TensorIndexType::None) {}
  TensorIndex(EllipsisIndexType) : type_(TensorIndexType::Ellipsis) {}
  TensorIndex(const char* s) : type_(TensorIndexType::Ellipsis) {
    BRASA_CHECK(std::string(s) == "...",
                "TensorIndex: expected \"...\" to represent an ellipsis index, but got \"", s,
                "\"");
  }
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  TensorIndex(T i) : type_(TensorIndexType::Integer), integer_(static_cast<int64_t>(i)) {}
  TensorIndex(bool b) : type_(TensorIndexType::Boolean), boolean_(b) {}
  TensorIndex(Slice s) : type_(TensorIndexType::Slice), slice_(s) {}
  TensorIndex(Tensor t) : type_(TensorIndexType::Tensor), tensor_(std::move(t)) {}

  TensorIndexType type() const { return type_; }
  bool is_none() const { return type_ == TensorIndexType::None; }
  bool is_ellipsis() const { return type_ == TensorIndexType::Ellipsis; }
  bool is_integer() const { return type_ == TensorIndexType::Integer; }
  bool is_boolean() const { return type_ == TensorIndexType::Boolean; }
  bool is_slice() const { return type_ == TensorIndexType::Slice; }
  bool is_tensor() const { return type_ == TensorIndexType::Tensor; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return boolean_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  TensorIndexType type_;
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
};

}  // namespace brasa::indexing
