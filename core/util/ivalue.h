#pragma once
// IValue: a small tagged value, libtorch's IValue subset — what
// ctx->saved_data of custom autograd functions holds and what
// multiprocessing::Queue messages are made of: none, a tensor, a list of
// tensors, a string-keyed dict of tensors (a state_dict), int, double, bool,
// string and a list of ints.
#include <brasa/tensor/tensor.h>

#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace brasa {

class IValue {
 public:
  // A dict of tensors in insertion order.
  using TensorDict = std::vector<std::pair<std::string, Tensor>>;

  IValue() = default;
  IValue(const Tensor& t) : v_(t) {}
  IValue(std::vector<Tensor> v) : v_(std::move(v)) {}
  IValue(TensorDict d) : v_(std::move(d)) {}
  IValue(const std::map<std::string, Tensor>& d) : v_(TensorDict(d.begin(), d.end())) {}
  // Any ordered dict of tensors with key()/value() items (nn's OrderedDict, a state_dict).
  template <class D, class = decltype(std::declval<const D&>().begin()->key()),
            class = decltype(std::declval<const D&>().begin()->value())>
  IValue(const D& dict) : v_(TensorDict()) {
    for (const auto& item : dict) std::get<TensorDict>(v_).emplace_back(item.key(), item.value());
  }
  IValue(double d) : v_(d) {}
  IValue(float d) : v_(static_cast<double>(d)) {}
  IValue(int64_t i) : v_(i) {}
  IValue(int i) : v_(static_cast<int64_t>(i)) {}
  IValue(bool b) : v_(b) {}
  IValue(std::string s) : v_(std::move(s)) {}
  IValue(const char* s) : v_(std::string(s)) {}
  IValue(std::vector<int64_t> v) : v_(std::move(v)) {}

  bool isNone() const { return v_.index() == 0; }
  bool isTensor() const { return std::holds_alternative<Tensor>(v_); }
  bool isTensorList() const { return std::holds_alternative<std::vector<Tensor>>(v_); }
  bool isGenericDict() const { return std::holds_alternative<TensorDict>(v_); }
  bool isDouble() const { return std::holds_alternative<double>(v_); }
  bool isInt() const { return std::holds_alternative<int64_t>(v_); }
  bool isBool() const { return std::holds_alternative<bool>(v_); }
  bool isString() const { return std::holds_alternative<std::string>(v_); }
  bool isIntList() const { return std::holds_alternative<std::vector<int64_t>>(v_); }

  Tensor toTensor() const { return get<Tensor>("Tensor"); }
  std::vector<Tensor> toTensorVector() const { return get<std::vector<Tensor>>("Tensor list"); }
  std::vector<Tensor> toTensorList() const { return toTensorVector(); }
  // The dict's items in insertion order, and as a map.
  const TensorDict& toTensorItems() const { return get<TensorDict>("dict of tensors"); }
  std::map<std::string, Tensor> toTensorDict() const {
    const TensorDict& d = toTensorItems();
    return std::map<std::string, Tensor>(d.begin(), d.end());
  }
  double toDouble() const {
    return isInt() ? static_cast<double>(std::get<int64_t>(v_)) : get<double>("double");
  }
  int64_t toInt() const { return get<int64_t>("int"); }
  bool toBool() const { return get<bool>("bool"); }
  const std::string& toStringRef() const { return get<std::string>("string"); }
  std::string toString() const { return toStringRef(); }
  std::vector<int64_t> toIntVector() const { return get<std::vector<int64_t>>("int list"); }
  // "Tensor", "int", ... for messages.
  const char* tagKind() const {
    static const char* const names[] = {"None",    "Tensor", "Tensor list", "dict of tensors",
                                        "double",  "int",    "bool",        "string",
                                        "int list"};
    return names[v_.index()];
  }

 private:
  template <class T>
  const T& get(const char* what) const {
    const T* p = std::get_if<T>(&v_);
    BRASA_CHECK(p, "IValue: expected ", what, " but the value holds ", tagKind());
    return *p;
  }
  std::variant<std::monostate, Tensor, std::vector<Tensor>, TensorDict, double, int64_t, bool,
               std::string, std::vector<int64_t>>
      v_;
};

}  // namespace brasa
