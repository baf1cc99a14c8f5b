#pragma once
// The module containers, with libtorch's surface: ModuleList (by position),
// ModuleDict (by key) and Sequential (a chain of forwards). Items are added
// as holders (nn::Linear(...)), shared_ptrs, module values or (Sequential)
// AnyModules; read back by operator[] / ptr (a shared_ptr<Module>), ptr<T>
// and at<T> (T is the module class, e.g. LinearImpl). A position or key
// that is not there, or a module of another type, is a clear error.
//
// Differences from libtorch, on purpose: ModuleList::insert renames the
// items after the insertion point so that names stay "0", "1", ... in order;
// ModuleDict::pop and clear unregister what they remove (as Python's
// ModuleDict), so its parameters leave parameters().
#include <brasa/nn/any_module.h>
#include <brasa/nn/module.h>

#include <concepts>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace brasa::nn {

namespace detail {
// A module value (not a holder, not a pointer): push_back(nn::LinearImpl(2, 3)).
template <class M>
concept ModuleValue = std::is_base_of_v<Module, std::decay_t<M>>;

// Whether the arguments are one C: the copy constructor, not an item.
template <class C, class... Args>
constexpr bool IsCopyOf = sizeof...(Args) == 1 && (std::is_same_v<std::decay_t<Args>, C> && ...);

// `module` as a T (a module class), or an error naming the container and
// where the module sits.
template <class T>
T& module_as(Module& module, const char* container, const std::string& where) {
  static_assert(std::is_base_of_v<Module, T>,
                "at<T>: T is a module class (e.g. torch::nn::LinearImpl), not a holder");
  T* typed = module.as<T>();
  BRASA_CHECK(typed != nullptr, container, "::at: the module at ", where, " is a ", module.name(),
              ", not the type asked for");
  return *typed;
}

// operator[], ptr<T> and at<T> of a container whose items sit at positions
// (ModuleList, Sequential), from its own ptr(index), which checks the index.
template <class Derived>
class ByPosition {
 public:
  std::shared_ptr<Module> operator[](size_t index) const { return self().ptr(index); }
  // The item as a T (a module class); null when it is not one.
  template <class T>
  std::shared_ptr<T> ptr(size_t index) const {
    return std::dynamic_pointer_cast<T>(self().ptr(index));
  }
  template <class T>
  T& at(size_t index) {
    return module_as<T>(*self().ptr(index), Derived::kKind, "index " + std::to_string(index));
  }
  template <class T>
  const T& at(size_t index) const {
    return const_cast<ByPosition*>(this)->at<T>(index);
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};
}  // namespace detail

// A list of submodules, registered as "0", "1", ...
class ModuleListImpl : public Cloneable<ModuleListImpl>, public detail::ByPosition<ModuleListImpl> {
 public:
  static constexpr const char* kKind = "ModuleList";
  using ByPosition::ptr;
  ModuleListImpl() : Cloneable("ModuleList") {}
  // A copy holds clones of the items.
  ModuleListImpl(const ModuleListImpl& o);
  template <class... Modules>
  requires(!detail::IsCopyOf<ModuleListImpl, Modules...>) explicit ModuleListImpl(
      Modules&&... modules)
      : Cloneable("ModuleList") {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  void push_back(std::shared_ptr<Module> module);
  template <class M>
  void push_back(const ModuleHolder<M>& holder) {
    push_back(std::shared_ptr<Module>(holder.ptr()));
  }
  template <detail::ModuleValue M>
  void push_back(M&& module) {
    push_back(std::shared_ptr<Module>(std::make_shared<std::decay_t<M>>(std::forward<M>(module))));
  }
  // Appends every item of `container` (a range of holders or shared_ptrs,
  // or another ModuleListImpl).
  template <class Container>
  void extend(const Container& container) {
    for (const auto& module : container) push_back(module);
  }
  // Inserts before position `index` (0 <= index <= size()).
  void insert(size_t index, std::shared_ptr<Module> module);
  template <class M>
  void insert(size_t index, const ModuleHolder<M>& holder) {
    insert(index, std::shared_ptr<Module>(holder.ptr()));
  }
  template <detail::ModuleValue M>
  void insert(size_t index, M&& module) {
    insert(index,
           std::shared_ptr<Module>(std::make_shared<std::decay_t<M>>(std::forward<M>(module))));
  }

  size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.empty(); }
  std::shared_ptr<Module> ptr(size_t index) const;
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> items_;
};
BRASA_MODULE(ModuleList);

// Submodules by key, in insertion order.
class ModuleDictImpl : public Cloneable<ModuleDictImpl> {
 public:
  using Items = OrderedDict<std::string, std::shared_ptr<Module>>;
  ModuleDictImpl() : Cloneable("ModuleDict") {}
  ModuleDictImpl(const ModuleDictImpl& o);  // holds clones of the items
  explicit ModuleDictImpl(
      const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  explicit ModuleDictImpl(const Items& modules);

  // Adds `module` under `key`, or replaces the module there.
  void insert(const std::string& key, std::shared_ptr<Module> module);
  template <class M>
  void insert(const std::string& key, const ModuleHolder<M>& holder) {
    insert(key, std::shared_ptr<Module>(holder.ptr()));
  }
  template <detail::ModuleValue M>
  void insert(const std::string& key, M&& module) {
    insert(key,
           std::shared_ptr<Module>(std::make_shared<std::decay_t<M>>(std::forward<M>(module))));
  }
  // insert() of every pair (a vector of key/module pairs).
  void update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  // insert() of every item of an OrderedDict or another ModuleDictImpl.
  template <class Container>
  void update(const Container& container) {
    for (const auto& item : container) insert(item.key(), item.value());
  }
  // Removes the module under `key` and returns it.
  std::shared_ptr<Module> pop(const std::string& key);
  void clear();

  std::shared_ptr<Module> operator[](const std::string& key) const;
  template <class T>
  T& at(const std::string& key) {
    return detail::module_as<T>(*(*this)[key], "ModuleDict", "key '" + key + "'");
  }
  template <class T>
  const T& at(const std::string& key) const {
    return const_cast<ModuleDictImpl*>(this)->at<T>(key);
  }
  bool contains(const std::string& key) const noexcept { return children_.contains(key); }
  size_t size() const noexcept { return children_.size(); }
  bool empty() const noexcept { return children_.size() == 0; }
  std::vector<std::string> keys() const { return children_.keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return children(); }
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> items() const;
  // Iterates the items (item.key(), item.value()).
  auto begin() { return children_.begin(); }
  auto end() { return children_.end(); }
  auto begin() const { return children_.begin(); }
  auto end() const { return children_.end(); }
};
BRASA_MODULE(ModuleDict);

// A module with its name, for Sequential({{"conv", nn::Conv2d(...)}, ...}).
class NamedAnyModule {
 public:
  template <class M>
  NamedAnyModule(std::string name, std::shared_ptr<M> module)
      : name_(std::move(name)), module_(std::move(module)) {}
  template <class M>
  NamedAnyModule(std::string name, const ModuleHolder<M>& holder)
      : NamedAnyModule(std::move(name), holder.ptr()) {}
  template <detail::ModuleValue M>
  NamedAnyModule(std::string name, M&& module)
      : NamedAnyModule(std::move(name),
                       std::make_shared<std::decay_t<M>>(std::forward<M>(module))) {}
  NamedAnyModule(std::string name, AnyModule module)
      : name_(std::move(name)), module_(std::move(module)) {}
  const std::string& name() const noexcept { return name_; }
  AnyModule& module() noexcept { return module_; }
  const AnyModule& module() const noexcept { return module_; }

 private:
  std::string name_;
  AnyModule module_;
};

// Runs its modules in order, each on the previous one's output. Modules
// whose forward takes and returns one Tensor are called directly; others
// (several inputs, another result type) through AnyModule, as in libtorch:
// seq->forward<std::tuple<Tensor, Tensor>>(x) when the last one returns a
// tuple. Iterating gives the AnyModules.
class SequentialImpl : public Cloneable<SequentialImpl>, public detail::ByPosition<SequentialImpl> {
 public:
  static constexpr const char* kKind = "Sequential";
  using ByPosition::ptr;
  SequentialImpl() : Cloneable("Sequential") {}
  SequentialImpl(const SequentialImpl& o);  // holds clones of the modules
  template <class... Modules>
  requires(!detail::IsCopyOf<SequentialImpl, Modules...>) explicit SequentialImpl(
      Modules&&... modules)
      : Cloneable("Sequential") {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  explicit SequentialImpl(std::initializer_list<NamedAnyModule> named_modules);
  explicit SequentialImpl(const OrderedDict<std::string, AnyModule>& named_modules);

  template <class M>
  void push_back(std::shared_ptr<M> module) {
    push_back(std::to_string(size()), std::move(module));
  }
  template <class M>
  void push_back(std::string name, std::shared_ptr<M> module) {
    static_assert(std::is_base_of_v<Module, M>, "Sequential::push_back takes modules");
    add_step(std::move(name), AnyModule(module), tensor_step<M>());
  }
  template <class M>
  void push_back(const ModuleHolder<M>& holder) {
    push_back(holder.ptr());
  }
  template <class M>
  void push_back(std::string name, const ModuleHolder<M>& holder) {
    push_back(std::move(name), holder.ptr());
  }
  template <detail::ModuleValue M>
  void push_back(M&& module) {
    push_back(std::make_shared<std::decay_t<M>>(std::forward<M>(module)));
  }
  template <detail::ModuleValue M>
  void push_back(std::string name, M&& module) {
    push_back(std::move(name), std::make_shared<std::decay_t<M>>(std::forward<M>(module)));
  }
  void push_back(AnyModule module) { push_back(std::to_string(size()), std::move(module)); }
  void push_back(std::string name, AnyModule module);
  // Appends every item of `container` (holders, shared_ptrs, AnyModules, or
  // another SequentialImpl).
  template <class Container>
  void extend(const Container& container) {
    for (const auto& module : container) push_back(module);
  }

  // The inputs go to the first module; the last module's output, as a
  // ReturnType, comes back.
  template <class ReturnType = Tensor, class... Inputs>
  ReturnType forward(Inputs&&... inputs) {
    if constexpr (std::is_same_v<ReturnType, Tensor> && sizeof...(Inputs) == 1 &&
                  (std::is_convertible_v<Inputs, const Tensor&> && ...)) {
      return forward_tensor(inputs...);
    } else {
      check_not_empty();
      AnyValue value = modules_.front().any_forward(std::forward<Inputs>(inputs)...);
      return forward_rest(std::move(value)).template get<ReturnType>();
    }
  }

  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  std::shared_ptr<Module> ptr(size_t index) const;
  auto begin() { return modules_.begin(); }
  auto end() { return modules_.end(); }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  using TensorStep = Tensor (*)(Module&, const Tensor&);
  // The direct call of M's forward on one Tensor, or null when its forward
  // is not Tensor(Tensor).
  template <class M>
  static TensorStep tensor_step() {
    if constexpr (requires(M & m, const Tensor& x) {
                    { m.forward(x) } -> std::same_as<Tensor>;
                  })
      return [](Module& m, const Tensor& x) { return static_cast<M&>(m).forward(x); };
    else
      return nullptr;
  }
  void add_step(std::string name, AnyModule module, TensorStep step);
  void check_not_empty() const;
  Tensor forward_tensor(const Tensor& x);
  // Runs the modules after the first on `value`.
  AnyValue forward_rest(AnyValue value);

  std::vector<AnyModule> modules_;
  std::vector<TensorStep> steps_;  // parallel to modules_
};

// The holder; it also takes a braced list of named modules, as libtorch's.
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  Sequential() : ModuleHolder<SequentialImpl>() {}
  Sequential(std::initializer_list<NamedAnyModule> named_modules)
      : ModuleHolder<SequentialImpl>(std::make_shared<SequentialImpl>(named_modules)) {}
};

}  // namespace brasa::nn
