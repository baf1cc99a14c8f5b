#include <brasa/device/device_runtime.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/variable.h>
#include <brasa/nn/module.h>
#include <brasa/ops/copy.h>

#include <cstdlib>
#include <ostream>
#include <typeinfo>

namespace brasa::nn {

Module::Module(std::string name) : name_(std::move(name)) {}

namespace {
// The dynamic type of `m`, demangled with its namespaces ("app::NetImpl").
std::string type_name(const Module& m) { return demangle(typeid(m).name()); }
}  // namespace

// Computed on each call: during a constructor the dynamic type is the class
// being constructed, so a cached name could be a base's.
std::string Module::name() const { return name_.empty() ? type_name(*this) : name_; }

// Brasa's own modules are the classes declared directly in brasa::nn.
bool Module::is_builtin() const {
  const std::string t = type_name(*this);
  const std::string prefix = "brasa::nn::";
  if (!t.starts_with(prefix)) return false;
  std::string rest = t.substr(prefix.size());
  rest = rest.substr(0, rest.find('<'));  // PadImpl<2>'s argument may name namespaces
  return rest.find("::") == std::string::npos;
}

void Module::check_new_name(const char* what, const std::string& name) const {
  BRASA_CHECK(!name.empty() && name.find('.') == std::string::npos, what,
              ": name must be non-empty and contain no dot, got '", name, "'");
  BRASA_CHECK(!parameters_.contains(name) && !buffers_.contains(name) && !children_.contains(name),
              what, ": attribute '", name, "' already exists in ", this->name());
}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_new_name("register_parameter", name);
  if (tensor.defined() && requires_grad) tensor.requires_grad_(true);
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor) {
  check_new_name("register_buffer", name);
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::add_child(std::string name, std::shared_ptr<Module> m) {
  check_new_name("register_module", name);
  BRASA_CHECK(m != nullptr, "register_module: submodule '", name, "' is null");
  children_.insert(std::move(name), std::move(m));
}

void Module::replace_module(const std::string& name, std::shared_ptr<Module> module) {
  children_[name] = std::move(module);
}

void Module::collect(const std::string& prefix, bool params,
                     OrderedDict<std::string, Tensor>& out) const {
  for (const auto& item : params ? parameters_ : buffers_)
    if (item.value().defined()) out.insert(prefix + item.key(), item.value());
  for (const auto& child : children_)
    child.value()->collect(prefix + child.key() + ".", params, out);
}

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<std::string, Tensor> out;
  if (!recurse) {
    for (const auto& item : parameters_)
      if (item.value().defined()) out.insert(item.key(), item.value());
    return out;
  }
  collect("", true, out);
  return out;
}
std::vector<Tensor> Module::parameters(bool recurse) const {
  return named_parameters(recurse).values();
}

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<std::string, Tensor> out;
  if (!recurse) {
    for (const auto& item : buffers_)
      if (item.value().defined()) out.insert(item.key(), item.value());
    return out;
  }
  collect("", false, out);
  return out;
}
std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }
OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const {
  OrderedDict<std::string, std::shared_ptr<Module>> out;
  for (const auto& c : children_) out.insert(c.key(), c.value());
  return out;
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& prefix,
                                                                        bool include_self) {
  OrderedDict<std::string, std::shared_ptr<Module>> out;
  std::function<void(const std::string&, const std::shared_ptr<Module>&)> walk =
      [&](const std::string& p, const std::shared_ptr<Module>& m) {
        for (const auto& c : m->children_) {
          std::string name = p.empty() ? c.key() : p + "." + c.key();
          out.insert(name, c.value());
          walk(name, c.value());
        }
      };
  if (include_self) out.insert(prefix, shared_from_this());
  walk(prefix, shared_from_this());
  return out;
}
std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  return named_modules("", include_self).values();
}

void Module::share_memory() {
  for (Tensor& p : parameters()) {
    if (!p.defined()) continue;
    p.share_memory_();
    if (p.grad().defined()) p.grad().share_memory_();
  }
  for (Tensor& b : buffers())
    if (b.defined()) b.share_memory_();
}

void Module::train(bool on) {
  training_ = on;
  for (auto& c : children_) c.value()->train(on);
}

void Module::zero_grad(bool set_to_none) {
  for (auto& p : parameters()) autograd::clear_grad(p, set_to_none);
}

void Module::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  for (auto& c : children_) c.value()->apply(fn);
}

void Module::to(Device device, bool non_blocking) {
  BRASA_CHECK(find_device_runtime(device.type()) != nullptr, name(), ".to(", device.str(),
              "): this build of Brasa has no ", device.str(), " support (",
              available_devices_text() == "cpu" ? "CPU only" : "it has " + available_devices_text(),
              ")");
  device_runtime((name() + ".to").c_str(), device);  // a device that exists here
  NoGradGuard ng;
  // Keep the same Tensor handles registered: swap each impl's storage.
  auto move = [device, non_blocking](Tensor& t) {
    if (!t.defined() || t.device() == device) return;
    Tensor c = t.to(device, t.dtype(), non_blocking);
    t.unsafeGetTensorImpl()->set_storage(c.storage());
    t.unsafeGetTensorImpl()->set_sizes_and_strides(c.sizes(), c.strides());
    t.unsafeGetTensorImpl()->set_storage_offset(0);
    if (t.grad().defined()) t.grad() = t.grad().to(device);
  };
  for (auto& p : parameters_) move(p.value());
  for (auto& b : buffers_) move(b.value());
  for (auto& c : children_) c.value()->to(device, non_blocking);
}

void Module::to(Device device, ScalarType dtype, bool non_blocking) {
  to(device, non_blocking);
  to(dtype);
}

void Module::to(ScalarType dtype) {
  NoGradGuard ng;
  auto convert = [dtype](Tensor& t) {
    if (!t.defined() || !t.is_floating_point() || t.dtype() == dtype) return;
    bool rg = t.requires_grad();
    // Keep the same Tensor handle registered: swap the impl's storage and dtype.
    Tensor c = t.to(dtype);
    t.unsafeGetTensorImpl()->set_storage(c.storage());
    t.unsafeGetTensorImpl()->set_dtype(dtype);
    t.unsafeGetTensorImpl()->set_sizes_and_strides(c.sizes(), c.strides());
    t.unsafeGetTensorImpl()->set_storage_offset(0);
    if (t.grad().defined()) t.grad() = t.grad().to(dtype);
    (void)rg;
  };
  for (auto& p : parameters_) convert(p.value());
  for (auto& b : buffers_) convert(b.value());
  for (auto& c : children_) c.value()->to(dtype);
}

OrderedDict<std::string, Tensor> Module::state_dict() const {
  OrderedDict<std::string, Tensor> out;
  collect("", true, out);
  collect("", false, out);
  return out;
}

void Module::load_state_dict(const OrderedDict<std::string, Tensor>& state, bool strict) {
  auto own = state_dict();
  std::vector<std::string> missing, unexpected;
  for (const auto& item : own)
    if (!state.contains(item.key())) missing.push_back(item.key());
  for (const auto& item : state)
    if (!own.contains(item.key())) unexpected.push_back(item.key());
  if (strict && (!missing.empty() || !unexpected.empty())) {
    std::string m, u;
    for (auto& k : missing) m += (m.empty() ? "" : ", ") + ("\"" + k + "\"");
    for (auto& k : unexpected) u += (u.empty() ? "" : ", ") + ("\"" + k + "\"");
    BRASA_ERROR("load_state_dict: Error(s) in loading state_dict for ", name(), ": missing keys: [",
                m, "], unexpected keys: [", u, "]");
  }
  // Every size is checked before anything is copied: a failed load changes nothing.
  for (auto& item : own) {
    const Tensor* src = state.find(item.key());
    if (!src) continue;
    BRASA_CHECK(src->defined(), "load_state_dict: ", item.key(), " is an undefined tensor");
    BRASA_CHECK(src->sizes() == item.value().sizes(), "load_state_dict: size mismatch for ",
                item.key(), ": copying a param with shape ", src->sizes(),
                " from checkpoint, the shape in current model is ", item.value().sizes(), ".");
  }
  NoGradGuard ng;
  for (auto& item : own)
    if (const Tensor* src = state.find(item.key())) item.value().copy_(*src);
}

std::shared_ptr<Module> Module::clone(const std::optional<Device>&) const {
  BRASA_ERROR("clone() has not been implemented for ", name(), ". Subclass nn::Cloneable<", name(),
              "> instead of nn::Module to inherit the ability to clone.");
}

bool Module::shares_state_with(const Module& other) const {
  auto shared = [](const OrderedDict<std::string, Tensor>& mine,
                   const OrderedDict<std::string, Tensor>& theirs) {
    for (const auto& t : theirs)
      if (const Tensor* m = mine.find(t.key()); m && m->defined() && m->is_same(t.value()))
        return true;
    return false;
  };
  for (const auto& c : other.children_)
    if (const auto* m = children_.find(c.key()); m && *m == c.value()) return true;
  return shared(parameters_, other.parameters_) || shared(buffers_, other.buffers_);
}

void Module::clear_registrations() {
  parameters_.clear();
  buffers_.clear();
  children_.clear();
}

// Copies values in place where shapes and dtypes agree, so that members
// holding the registered tensors (libtorch style `w = register_parameter(..)`)
// stay the registered tensors.
static void copy_tensors(const char* what, const std::string& module,
                         OrderedDict<std::string, Tensor>& dst,
                         const OrderedDict<std::string, Tensor>& src) {
  for (const auto& item : src) {
    Tensor* slot = dst.find(item.key());
    BRASA_CHECK(slot, "clone: the copy of ", module, " has no ", what, " '", item.key(),
                "' (does reset() register everything the constructor does?)");
    const Tensor& from = item.value();
    if (!from.defined()) {
      *slot = Tensor();
    } else if (slot->defined() && slot->sizes() == from.sizes() && slot->dtype() == from.dtype() &&
               !slot->is_same(from)) {
      slot->copy_(from);
      slot->requires_grad_(from.requires_grad());
    } else {
      *slot = from.detach().clone().requires_grad_(from.requires_grad());
    }
  }
}

void Module::copy_state_from(const Module& source) {
  NoGradGuard ng;
  training_ = source.training_;
  copy_tensors("parameter", name(), parameters_, source.parameters_);
  copy_tensors("buffer", name(), buffers_, source.buffers_);
  for (const auto& c : source.children_) {
    auto* mine = children_.find(c.key());
    BRASA_CHECK(mine, "clone: the copy of ", name(), " has no submodule '", c.key(),
                "' (does reset() register everything the constructor does?)");
    (*mine)->copy_state_from(*c.value());
  }
}

void Module::pretty_print(std::ostream& os) const {
  if (!is_builtin()) {
    os << name();
    return;
  }
  // Built-in containers (Sequential, ModuleList) print their children after it.
  os << "torch::nn::" << name_ << (children_.is_empty() ? "()" : "");
}

namespace {
void print_module(std::ostream& os, const Module& m, int indent) {
  m.pretty_print(os);
  auto children = m.named_children();
  if (children.is_empty()) return;
  os << "(\n";
  for (const auto& c : children) {
    os << std::string(indent + 2, ' ') << "(" << c.key() << "): ";
    print_module(os, *c.value(), indent + 2);
    os << "\n";
  }
  os << std::string(indent, ' ') << ")";
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Module& m) {
  print_module(os, m, 0);
  return os;
}

}  // namespace brasa::nn
