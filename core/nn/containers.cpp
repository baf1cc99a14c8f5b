#include <brasa/nn/containers.h>

#include <sstream>

namespace brasa::nn {

namespace {

void check_index(const char* what, size_t index, size_t size) {
  BRASA_CHECK(index < size, what, ": index ", index, " is out of range for ", size, " module",
              size == 1 ? "" : "s");
}

void check_module(const char* what, const std::shared_ptr<Module>& module) {
  BRASA_CHECK(module != nullptr, what, ": the module is null");
}

}  // namespace

// ---- ModuleList ----

ModuleListImpl::ModuleListImpl(const ModuleListImpl& o) : Cloneable(o) {
  for (auto& child : children_) {
    child.value() = child.value()->clone();
    items_.push_back(child.value());
  }
}

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  check_module("ModuleList::push_back", module);
  register_module(std::to_string(items_.size()), module);
  items_.push_back(std::move(module));
}

void ModuleListImpl::insert(size_t index, std::shared_ptr<Module> module) {
  check_module("ModuleList::insert", module);
  BRASA_CHECK(index <= items_.size(), "ModuleList::insert: index ", index, " is out of range for ",
              items_.size(), " modules (0 to ", items_.size(), " can insert)");
  items_.insert(items_.begin() + static_cast<std::ptrdiff_t>(index), std::move(module));
  // The names follow the positions.
  children_ = OrderedDict<std::string, std::shared_ptr<Module>>("Submodule");
  for (size_t i = 0; i < items_.size(); ++i) register_module(std::to_string(i), items_[i]);
}

std::shared_ptr<Module> ModuleListImpl::ptr(size_t index) const {
  check_index("ModuleList", index, items_.size());
  return items_[index];
}

// ---- ModuleDict ----

ModuleDictImpl::ModuleDictImpl(const ModuleDictImpl& o) : Cloneable(o) {
  for (auto& child : children_) child.value() = child.value()->clone();
}

ModuleDictImpl::ModuleDictImpl(
    const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules)
    : ModuleDictImpl() {
  update(modules);
}

ModuleDictImpl::ModuleDictImpl(const Items& modules) : ModuleDictImpl() { update(modules); }

void ModuleDictImpl::insert(const std::string& key, std::shared_ptr<Module> module) {
  check_module("ModuleDict::insert", module);
  if (contains(key))
    replace_module(key, std::move(module));
  else
    register_module(key, std::move(module));
}

void ModuleDictImpl::update(
    const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
  for (const auto& [key, module] : modules) insert(key, module);
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  if (const auto* module = children_.find(key)) return *module;
  std::ostringstream keys;
  for (const auto& k : children_.keys()) keys << (keys.tellp() > 0 ? ", " : "") << k;
  BRASA_ERROR("ModuleDict: no module under key '", key, "' (keys: ", keys.str(), ")");
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  auto module = (*this)[key];  // checks the key
  children_.erase(key);
  return module;
}

void ModuleDictImpl::clear() { children_ = Items("Submodule"); }

std::vector<std::pair<std::string, std::shared_ptr<Module>>> ModuleDictImpl::items() const {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  for (const auto& item : children_) out.emplace_back(item.key(), item.value());
  return out;
}

// ---- Sequential ----

SequentialImpl::SequentialImpl(const SequentialImpl& o) : Cloneable(o), steps_(o.steps_) {
  size_t i = 0;
  for (auto& child : children_) {
    modules_.push_back(o.modules_[i++].clone());
    child.value() = modules_.back().ptr();
  }
}

SequentialImpl::SequentialImpl(std::initializer_list<NamedAnyModule> named_modules)
    : SequentialImpl() {
  for (const auto& named : named_modules) push_back(named.name(), named.module());
}

SequentialImpl::SequentialImpl(const OrderedDict<std::string, AnyModule>& named_modules)
    : SequentialImpl() {
  for (const auto& item : named_modules) push_back(item.key(), item.value());
}

void SequentialImpl::push_back(std::string name, AnyModule module) {
  add_step(std::move(name), std::move(module), nullptr);
}

void SequentialImpl::add_step(std::string name, AnyModule module, TensorStep step) {
  BRASA_CHECK(!module.is_empty(), "Sequential::push_back: the module '", name, "' is empty");
  register_module(std::move(name), module.ptr());
  modules_.push_back(std::move(module));
  steps_.push_back(step);
}

std::shared_ptr<Module> SequentialImpl::ptr(size_t index) const {
  check_index("Sequential", index, modules_.size());
  return modules_[index].ptr();
}

void SequentialImpl::check_not_empty() const {
  BRASA_CHECK(!modules_.empty(), "Cannot call forward() on an empty Sequential");
}

Tensor SequentialImpl::forward_tensor(const Tensor& x) {
  check_not_empty();
  Tensor h = x;
  for (size_t i = 0; i < modules_.size(); ++i)
    h = steps_[i] ? steps_[i](*modules_[i].ptr(), h) : modules_[i].forward(h);
  return h;
}

AnyValue SequentialImpl::forward_rest(AnyValue value) {
  for (size_t i = 1; i < modules_.size(); ++i) value = modules_[i].any_forward(std::move(value));
  return value;
}

}  // namespace brasa::nn
