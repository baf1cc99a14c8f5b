#pragma once
// ParameterList and ParameterDict: parameters held by position or by key,
// registered under those names ("0", "1", ... or the key), as libtorch has them.
#include <brasa/nn/module.h>

#include <initializer_list>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace brasa::nn {

class ParameterListImpl : public Cloneable<ParameterListImpl> {
 public:
  ParameterListImpl() : Cloneable("ParameterList") {}
  // A copy holds copies of the parameters (clone() then copies the values in).
  ParameterListImpl(const ParameterListImpl& o);
  template <class... Tensors>
  explicit ParameterListImpl(Tensors&&... params) : Cloneable("ParameterList") {
    (append(std::forward<Tensors>(params)), ...);
  }
  void reset() override {}
  // Registers the tensor as parameter "size()" (requiring grad).
  void append(const Tensor& param);
  void extend(const std::vector<Tensor>& params);
  Tensor& operator[](size_t i);
  Tensor& at(size_t i) { return (*this)[i]; }
  size_t size() const { return parameters_.size(); }
  bool is_empty() const { return parameters_.is_empty(); }
  auto begin() { return parameters_.begin(); }
  auto end() { return parameters_.end(); }
  void pretty_print(std::ostream& os) const override;
};
BRASA_MODULE(ParameterList);

class ParameterDictImpl : public Cloneable<ParameterDictImpl> {
 public:
  ParameterDictImpl() : Cloneable("ParameterDict") {}
  ParameterDictImpl(const ParameterDictImpl& o);
  explicit ParameterDictImpl(const OrderedDict<std::string, Tensor>& params);
  void reset() override {}
  // Registers the tensor under key (requiring grad); an existing key is replaced.
  Tensor& insert(const std::string& key, const Tensor& param);
  Tensor& operator[](const std::string& key);
  Tensor& get(const std::string& key) { return (*this)[key]; }
  bool contains(const std::string& key) const { return parameters_.contains(key); }
  Tensor pop(const std::string& key);
  void clear() { parameters_.clear(); }
  std::vector<std::string> keys() const { return parameters_.keys(); }
  std::vector<Tensor> values() const { return parameters_.values(); }
  size_t size() const { return parameters_.size(); }
  bool empty() const { return parameters_.is_empty(); }
  auto begin() { return parameters_.begin(); }
  auto end() { return parameters_.end(); }
  void pretty_print(std::ostream& os) const override;
};
BRASA_MODULE(ParameterDict);

}  // namespace brasa::nn
