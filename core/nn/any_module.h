#pragma once
// AnyModule and AnyValue, as libtorch's: a module of any type whose forward
// takes and returns any types, called through one interface. Arguments and
// the result travel as AnyValues (a value of any copyable type); a call
// checks the number of arguments and each argument's type against the
// wrapped forward's signature and names what did not match.
//
// A module whose forward has trailing default arguments says so with
// FORWARD_HAS_DEFAULT_ARGS({index, AnyValue(value)}, ...), so that calls
// through AnyModule may leave them out, as in libtorch.
#include <brasa/nn/module.h>
#include <brasa/util/error.h>

#include <any>
#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace brasa::nn {

class AnyValue {
 public:
  template <class T, class = std::enable_if_t<!std::is_same_v<std::decay_t<T>, AnyValue>>>
  explicit AnyValue(T&& value) : value_(std::decay_t<T>(std::forward<T>(value))) {}

  // The value if it has type T, else nullptr.
  template <class T>
  T* try_get() {
    return std::any_cast<T>(&value_);
  }
  // The value as a T; an error naming both types when it is not one.
  template <class T>
  T get() {
    T* p = try_get<T>();
    BRASA_CHECK(p != nullptr, "Attempted to cast AnyValue to ", demangle(typeid(T).name()),
                ", but its actual type is ", demangle(value_.type().name()));
    return *p;
  }
  const std::type_info& type_info() const noexcept { return value_.type(); }

 private:
  std::any value_;
};

namespace detail {

// The type-erased side of an AnyModule.
class AnyModulePlaceholder {
 public:
  virtual ~AnyModulePlaceholder() = default;
  virtual AnyValue forward(std::vector<AnyValue>&& arguments) = 0;
  virtual std::shared_ptr<Module> ptr() const = 0;
  virtual const std::type_info& type_info() const = 0;
  virtual std::unique_ptr<AnyModulePlaceholder> clone_module(
      const std::optional<Device>& device) const = 0;
};

// Whether M declared defaults for trailing forward arguments.
template <class M>
concept HasForwardDefaults = requires(M& m, std::vector<AnyValue>&& a) {
  m._forward_num_required_args();
  m._forward_populate_default_args(std::move(a));
};

// Holds a module of type M whose forward is R M::forward(Args...).
template <class M, class R, class... Args>
class AnyModuleHolder final : public AnyModulePlaceholder {
 public:
  explicit AnyModuleHolder(std::shared_ptr<M> module) : module_(std::move(module)) {}

  AnyValue forward(std::vector<AnyValue>&& arguments) override {
    constexpr size_t total = sizeof...(Args);
    if constexpr (HasForwardDefaults<M>) {
      const size_t required = module_->_forward_num_required_args();
      BRASA_CHECK(arguments.size() >= required && arguments.size() <= total, module_->name(),
                  "'s forward() method expects at least ", required, " argument(s) and at most ",
                  total, " argument(s), but received ", arguments.size(), ".");
      arguments = module_->_forward_populate_default_args(std::move(arguments));
    } else {
      BRASA_CHECK(arguments.size() == total, module_->name(), "'s forward() method expects ", total,
                  " argument(s), but received ", arguments.size(), ".");
    }
    return call(arguments, std::index_sequence_for<Args...>{});
  }
  std::shared_ptr<Module> ptr() const override { return module_; }
  const std::type_info& type_info() const override { return typeid(M); }
  std::unique_ptr<AnyModulePlaceholder> clone_module(
      const std::optional<Device>& device) const override {
    return std::make_unique<AnyModuleHolder>(std::dynamic_pointer_cast<M>(module_->clone(device)));
  }
  M& module() const { return *module_; }

 private:
  template <size_t... I>
  AnyValue call(std::vector<AnyValue>& arguments, std::index_sequence<I...>) {
    return AnyValue(module_->forward(arguments[I].template get<std::decay_t<Args>>()...));
  }
  std::shared_ptr<M> module_;
};

// C is the class that declares forward: M itself or a base of it.
template <class M, class C, class R, class... Args>
std::unique_ptr<AnyModulePlaceholder> make_any_module_holder(std::shared_ptr<M> module,
                                                             R (C::*)(Args...)) {
  static_assert(!std::is_void_v<R>, "AnyModule: the module's forward() must return a value");
  return std::make_unique<AnyModuleHolder<M, R, Args...>>(std::move(module));
}
template <class M, class C, class R, class... Args>
std::unique_ptr<AnyModulePlaceholder> make_any_module_holder(std::shared_ptr<M> module,
                                                             R (C::*)(Args...) const) {
  static_assert(!std::is_void_v<R>, "AnyModule: the module's forward() must return a value");
  return std::make_unique<AnyModuleHolder<M, R, Args...>>(std::move(module));
}
// A forward that has no single address (a template, as Sequential's, or
// overloads) is called as Tensor forward(const Tensor&).
template <class M>
std::unique_ptr<AnyModulePlaceholder> make_any_module_holder(std::shared_ptr<M> module) {
  if constexpr (requires { &M::forward; }) {
    return make_any_module_holder(std::move(module), &M::forward);
  } else {
    static_assert(
        requires(M & m, const Tensor& x) {
          { m.forward(x) } -> std::convertible_to<Tensor>;
        },
        "AnyModule: the module's forward() is a template or overloaded; it must take one Tensor");
    return std::make_unique<AnyModuleHolder<M, Tensor, const Tensor&>>(std::move(module));
  }
}

}  // namespace detail

class AnyModule {
 public:
  AnyModule() = default;
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, M>>>
  explicit AnyModule(std::shared_ptr<M> module)
      : content_(detail::make_any_module_holder(std::move(module))) {}
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, M>>>
  explicit AnyModule(M&& module) : AnyModule(std::make_shared<M>(std::forward<M>(module))) {}
  template <class Impl>
  explicit AnyModule(const ModuleHolder<Impl>& holder) : AnyModule(holder.ptr()) {}

  // Copies call the same module, as libtorch's do (clone() copies it).
  AnyModule(const AnyModule&) = default;
  AnyModule& operator=(const AnyModule&) = default;
  AnyModule(AnyModule&&) = default;
  AnyModule& operator=(AnyModule&&) = default;
  template <class M>
  AnyModule& operator=(std::shared_ptr<M> module) {
    return *this = AnyModule(std::move(module));
  }

  // A deep copy of the module (its clone()), optionally onto `device`.
  AnyModule clone(const std::optional<Device>& device = std::nullopt) const {
    AnyModule copy;
    if (holder()) copy.content_ = holder()->clone_module(device);
    return copy;
  }

  template <class... Arguments>
  AnyValue any_forward(Arguments&&... arguments) {
    BRASA_CHECK(!is_empty(), "Cannot call forward() on an empty AnyModule");
    std::vector<AnyValue> values;
    values.reserve(sizeof...(Arguments));
    (values.emplace_back(std::forward<Arguments>(arguments)), ...);
    return holder()->forward(std::move(values));
  }
  template <class ReturnType = Tensor, class... Arguments>
  ReturnType forward(Arguments&&... arguments) {
    return any_forward(std::forward<Arguments>(arguments)...).template get<ReturnType>();
  }

  // The module as its own type (T is the module class, e.g. LinearImpl).
  template <class T>
  requires std::is_base_of_v<Module, T> T& get() const {
    BRASA_CHECK(!is_empty(), "Cannot call get() on an empty AnyModule");
    auto* p = dynamic_cast<T*>(holder()->ptr().get());
    BRASA_CHECK(p != nullptr, "Attempted to cast module of type ", holder()->ptr()->name(),
                " to a type that it is not");
    return *p;
  }
  // The module in its holder (T is the holder, e.g. Linear).
  template <class T>
  requires requires { typename T::ContainedType; }
  T get() const { return T(ptr<typename T::ContainedType>()); }
  std::shared_ptr<Module> ptr() const {
    BRASA_CHECK(!is_empty(), "Cannot call ptr() on an empty AnyModule");
    return holder()->ptr();
  }
  template <class T>
  std::shared_ptr<T> ptr() const {
    get<T>();  // checks the type
    return std::dynamic_pointer_cast<T>(holder()->ptr());
  }
  const std::type_info& type_info() const {
    BRASA_CHECK(!is_empty(), "Cannot call type_info() on an empty AnyModule");
    return holder()->type_info();
  }
  bool is_empty() const noexcept { return holder() == nullptr; }

 private:
  detail::AnyModulePlaceholder* holder() const { return content_.get(); }
  std::shared_ptr<detail::AnyModulePlaceholder> content_;
};

}  // namespace brasa::nn

// Inside a module class: the forward arguments from the first index given
// on may be left out of AnyModule calls and take these values, e.g.
// (what follows the macro in the class is public)
//   FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())}, {2, AnyValue(Tensor())})
#define FORWARD_HAS_DEFAULT_ARGS(...)                                                    \
 public:                                                                                 \
  static std::vector<std::pair<size_t, ::brasa::nn::AnyValue>> _forward_default_args() { \
    return {__VA_ARGS__};                                                                \
  }                                                                                      \
  size_t _forward_num_required_args() { return _forward_default_args().front().first; }  \
  std::vector<::brasa::nn::AnyValue> _forward_populate_default_args(                     \
      std::vector<::brasa::nn::AnyValue>&& arguments) {                                  \
    for (auto& [index, value] : _forward_default_args())                                 \
      if (index >= arguments.size()) arguments.push_back(std::move(value));              \
    return std::move(arguments);                                                         \
  }
