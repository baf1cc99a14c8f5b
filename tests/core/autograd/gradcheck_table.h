#pragma once
// The gradcheck table's entries and input makers, shared by the files that
// add entries to it (gradcheck_table_test.cpp runs them all).
#include <brasa/torch.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace brasa {

using autograd::variable_list;
using Fn = std::function<variable_list(const variable_list&)>;

struct OpCase {
  std::string name;
  std::function<variable_list()> inputs;
  Fn fn;
  bool gradgrad = true;
};

inline TensorOptions f64() { return TensorOptions().dtype(kDouble); }
// Random inputs of various kinds; all leaves that require grad.
inline Tensor R(IntArrayRef s) { return randn(s, f64()).requires_grad_(); }
inline Tensor Pos(IntArrayRef s) { return (rand(s, f64()) + 0.5).detach().requires_grad_(); }
inline Tensor Unit(IntArrayRef s) {
  return ((rand(s, f64()) - 0.5) * 1.6).detach().requires_grad_();
}
// Non-contiguous leaf: the transpose of a [s1, s0] tensor.
inline Tensor NonContig(int64_t a, int64_t b) {
  return randn({b, a}, f64()).t().detach().requires_grad_();
}
inline Tensor Idx(std::initializer_list<int64_t> v) { return tensor(std::vector<int64_t>(v)); }

inline variable_list one(const Tensor& t) { return {t}; }

// Inputs made by one or two makers.
inline std::function<variable_list()> in1(std::function<Tensor()> f) {
  return [f] { return variable_list{f()}; };
}
inline std::function<variable_list()> in2(std::function<Tensor()> f, std::function<Tensor()> g) {
  return [f, g] { return variable_list{f(), g()}; };
}

// The entries of the ops added for libtorch programs (gradcheck_table_libtorch.cpp).
void add_libtorch_port_entries(std::vector<OpCase>& t);

}  // namespace brasa
