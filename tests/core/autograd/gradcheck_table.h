#pragma once
// The gradcheck table's entries and input makers, shared by the files that
// add entries to it (gradcheck_table_test.cpp runs them all).
#include <brasa/torch.h>

#include <functional>
#include <initializer_list>
#include <map>
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
  // It draws random numbers: on CUDA they come from the device's own
  // generator, so its outputs are not compared with the CPU's.
  bool draws_random = false;
};

// The device of the constants (indices, masks, running stats) that a case's
// fn makes: the CPU, or CUDA while the CUDA comparison runs the fn
// (CaseOnDevice), so that they sit beside the inputs.
inline Device& case_device() {
  static Device d(kCPU);
  return d;
}
struct CaseOnDevice {
  explicit CaseOnDevice(Device d) { case_device() = d; }
  ~CaseOnDevice() { case_device() = Device(kCPU); }
};
inline Tensor on_case_device(const Tensor& t) { return t.to(case_device()); }
// A case's module on the case's device: the module itself on the CPU, a
// clone made once for CUDA (moving the one module between devices would
// change the weights that the CPU run's graph saved).
template <class Holder>
Holder on_case_device(const Holder& cpu_module) {
  if (!case_device().is_cuda()) return cpu_module;
  static std::map<const void*, Holder> clones;
  auto it = clones.find(cpu_module.get());
  if (it == clones.end())
    it = clones
             .emplace(cpu_module.get(),
                      Holder(std::dynamic_pointer_cast<typename Holder::ContainedType>(
                          cpu_module->clone(case_device()))))
             .first;
  return it->second;
}
inline TensorOptions f64() { return TensorOptions().dtype(kDouble).device(case_device()); }
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
inline Tensor Idx(std::initializer_list<int64_t> v) {
  return on_case_device(tensor(std::vector<int64_t>(v)));
}

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
// The entries of convolution, pooling and nn::functional (gradcheck_table_nn.cpp).
void add_nn_entries(std::vector<OpCase>& t);

}  // namespace brasa
