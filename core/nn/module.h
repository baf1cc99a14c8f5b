#pragma once
// nn::Module: parameters, buffers and submodules registered by name, with
// libtorch's API (named_parameters, train/eval, zero_grad, state_dict ...).
// Modules are held through ModuleHolder<XxxImpl> (BRASA_MODULE), as in
// libtorch: nn::Linear fc{nullptr}; fc = nn::Linear(784, 10); fc->forward(x).
#include <brasa/nn/ordered_dict.h>
#include <brasa/tensor/tensor.h>

#include <functional>
#include <ostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace brasa::serialize {
class OutputArchive;
class InputArchive;
}  // namespace brasa::serialize

namespace brasa::nn {

class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string name = "");
  virtual ~Module() = default;

  // The name given to the constructor (built-in modules: "Linear", "Conv2d",
  // ...), else the class's own name with its namespaces ("NetImpl",
  // "app::Model"), as libtorch names modules.
  std::string name() const;

  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& prefix = "",
                                                                  bool include_self = true);

  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Clears gradients: undefined (set_to_none) or zero-filled.
  virtual void zero_grad(bool set_to_none = true);
  void apply(const std::function<void(Module&)>& fn);
  // Moves parameters (and their gradients) and buffers into shared memory in
  // place, so that processes forked or sent them share one copy (Hogwild).
  void share_memory();
  // Converts parameters and buffers in place (the same Tensor handles stay registered).
  virtual void to(ScalarType dtype);
  // Moves parameters and buffers to `device`. This build has the CPU only:
  // the CPU is accepted as is, another device is a clear error.
  virtual void to(Device device, bool non_blocking = false);
  void to(Device device, ScalarType dtype, bool non_blocking = false);

  // A deep copy: same structure, its own copies of every parameter and
  // buffer, the same training flags (libtorch's clone). Modules get it by
  // deriving from nn::Cloneable<Self> (every built-in module does); for
  // others it raises a clear error, as in libtorch.
  virtual std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const;

  // Parameters and buffers with dotted names ("features.0.weight").
  OrderedDict<std::string, Tensor> state_dict() const;
  // Copies values in; strict: every key must match both ways. Shapes must match.
  void load_state_dict(const OrderedDict<std::string, Tensor>& state, bool strict = true);

  // libtorch's archive form of the state: parameters and buffers by name,
  // children as nested archives (<brasa/serialize/archive.h>). load reads
  // every defined parameter and buffer; a missing one is an error.
  virtual void save(serialize::OutputArchive& archive) const;
  virtual void load(serialize::InputArchive& archive);

  // This module without its children, as libtorch prints it: built-in
  // modules as "torch::nn::Linear(in_features=2, ...)", others by name();
  // operator<< adds the children, indented.
  virtual void pretty_print(std::ostream& os) const;

  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  Tensor& register_buffer(std::string name, Tensor tensor);
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    add_child(std::move(name), module);
    return module;
  }
  // With a holder (nn::Linear(...)), returns the holder, as libtorch does.
  template <class Holder, class = decltype(std::declval<Holder>().ptr())>
  Holder register_module(std::string name, Holder holder) {
    register_module(std::move(name), holder.ptr());
    return holder;
  }
  // This module as a `M` (an Impl class, or a holder such as nn::Linear for its
  // Impl), or null when it is not one.
  template <class M>
  auto* as() noexcept {
    if constexpr (requires { typename M::ContainedType; })
      return dynamic_cast<typename M::ContainedType*>(this);
    else
      return dynamic_cast<M*>(this);
  }
  template <class M>
  const auto* as() const noexcept {
    return const_cast<Module*>(this)->as<M>();
  }
  // Replaces a registered submodule (Sequential, ModuleList use it).
  void replace_module(const std::string& name, std::shared_ptr<Module> module);

 protected:
  void set_name(std::string n) { name_ = std::move(n); }
  // The steps of Cloneable::clone (see there).
  bool shares_state_with(const Module& other) const;
  void clear_registrations();
  void copy_state_from(const Module& source);
  OrderedDict<std::string, Tensor> parameters_{"Parameter"};
  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"Submodule"};

 private:
  void add_child(std::string name, std::shared_ptr<Module> m);
  void check_new_name(const char* what, const std::string& name) const;
  bool is_builtin() const;
  void collect(const std::string& prefix, bool params, OrderedDict<std::string, Tensor>& out) const;
  std::string name_;
  bool training_ = true;
};

std::ostream& operator<<(std::ostream& os, const Module& m);

namespace detail {
// The parenthesized part of a built-in module's print, from its options:
// "()" unless an overload for the options prints more ("(dim=1)").
template <class Options>
void print_options(std::ostream& os, const Options&) {
  os << "()";
}
}  // namespace detail

// Base of cloneable modules (libtorch's nn::Cloneable<Derived>; `Base` lets a
// built-in derive through an intermediate class). clone() copy-constructs
// Derived; when that copy still shares parameters, buffers or submodules
// with the original (the implicit copy constructor of a user module), it
// clears them and calls reset(), which must register them anew, as the
// constructor does. Then the original's values are copied in by name.
// Built-in modules have copy constructors that build fresh state.
template <class Derived, class Base = Module>
class Cloneable : public Base {
 public:
  using Base::Base;
  virtual void reset() {
    BRASA_ERROR("clone: ", this->name(),
                " shares its parameters, buffers or submodules with its copy; override ",
                "reset() to register them anew (as in libtorch's Cloneable)");
  }
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    auto copy = std::make_shared<Derived>(static_cast<const Derived&>(*this));
    if (copy->shares_state_with(*this)) {
      copy->clear_registrations();
      copy->reset();
    }
    copy->copy_state_from(*this);
    if (device) static_cast<Module&>(*copy).to(*device);
    return copy;
  }
};

// Holder: a shared_ptr to an XxxImpl with value semantics, as in libtorch.
template <class Impl>
class ModuleHolder {
 public:
  using ContainedType = Impl;
  ModuleHolder(std::nullptr_t) {}
  template <class... Args, class = std::enable_if_t<std::is_constructible_v<Impl, Args...>>>
  explicit ModuleHolder(Args&&... args)
      : impl_(std::make_shared<Impl>(std::forward<Args>(args)...)) {}
  ModuleHolder(std::shared_ptr<Impl> p) : impl_(std::move(p)) {}
  Impl* operator->() const { return get(); }
  Impl& operator*() const { return *get(); }
  Impl* get() const {
    BRASA_CHECK(impl_,
                "Accessing an empty ModuleHolder (constructed with nullptr and never assigned)");
    return impl_.get();
  }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return impl_ == nullptr; }
  explicit operator bool() const { return impl_ != nullptr; }
  template <class... Args>
  auto operator()(Args&&... args) const {
    return get()->forward(std::forward<Args>(args)...);
  }
  // Indexing goes to the module: list[0], dict["key"], seq[2].
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) const {
    return (*get())[std::forward<Arg>(arg)];
  }

 private:
  std::shared_ptr<Impl> impl_;
};

template <class Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& h) {
  return os << *h.get();
}

}  // namespace brasa::nn

// BRASA_MODULE(Linear) defines nn::Linear as the holder of LinearImpl.
#define BRASA_MODULE(Name)                                     \
  class Name : public ::brasa::nn::ModuleHolder<Name##Impl> {  \
   public:                                                     \
    using ::brasa::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }
#define TORCH_MODULE(Name) BRASA_MODULE(Name)
