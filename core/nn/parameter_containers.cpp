#include <brasa/nn/parameter_containers.h>

namespace brasa::nn {

namespace {
// libtorch's line per parameter: "(name): Parameter containing: [Float of size [2, 3]]".
void print_parameters(std::ostream& os, const char* name,
                      const OrderedDict<std::string, Tensor>& params) {
  os << "torch::nn::" << name << "(\n";
  for (const auto& p : params) {
    os << "(" << p.key() << "): Parameter containing: [" << p.value().scalar_type() << " of size "
       << p.value().sizes() << "]\n";
  }
  os << ")";
}
}  // namespace

ParameterListImpl::ParameterListImpl(const ParameterListImpl& o) : Cloneable("ParameterList") {
  for (const auto& p : o.parameters_) append(p.value().detach().clone());
}
ParameterDictImpl::ParameterDictImpl(const ParameterDictImpl& o) : Cloneable("ParameterDict") {
  for (const auto& p : o.parameters_) insert(p.key(), p.value().detach().clone());
}

void ParameterListImpl::append(const Tensor& param) {
  BRASA_CHECK(param.defined(), "ParameterList: cannot append an undefined tensor");
  register_parameter(std::to_string(parameters_.size()), param);
}
void ParameterListImpl::extend(const std::vector<Tensor>& params) {
  for (const Tensor& p : params) append(p);
}
Tensor& ParameterListImpl::operator[](size_t i) {
  BRASA_CHECK(i < parameters_.size(), "ParameterList: index ", i, " is out of range for ",
              parameters_.size(), " parameters");
  return parameters_[std::to_string(i)];
}
void ParameterListImpl::pretty_print(std::ostream& os) const {
  print_parameters(os, "ParameterList", parameters_);
}

ParameterDictImpl::ParameterDictImpl(const OrderedDict<std::string, Tensor>& params)
    : Cloneable("ParameterDict") {
  for (const auto& p : params) insert(p.key(), p.value());
}
Tensor& ParameterDictImpl::insert(const std::string& key, const Tensor& param) {
  BRASA_CHECK(param.defined(), "ParameterDict: cannot insert an undefined tensor as '", key, "'");
  if (Tensor* existing = parameters_.find(key)) {
    *existing = param;
    if (!existing->requires_grad()) existing->requires_grad_(true);
    return *existing;
  }
  return register_parameter(key, param);
}
Tensor& ParameterDictImpl::operator[](const std::string& key) {
  BRASA_CHECK(parameters_.contains(key), "ParameterDict: no parameter with key '", key, "'");
  return parameters_[key];
}
Tensor ParameterDictImpl::pop(const std::string& key) {
  BRASA_CHECK(parameters_.contains(key), "ParameterDict: no parameter with key '", key, "'");
  return parameters_.erase(key);
}
void ParameterDictImpl::pretty_print(std::ostream& os) const {
  print_parameters(os, "ParameterDict", parameters_);
}

}  // namespace brasa::nn
