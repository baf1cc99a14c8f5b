#include <brasa/autograd/function.h>
#include <brasa/ops/factory.h>

#include <cstdlib>

namespace brasa::autograd {

std::string demangled_name(const char* mangled) {
  const std::string s = demangle(mangled);
  // Drop namespaces: "ns::MulConstant" -> "MulConstant".
  auto colon = s.rfind("::");
  return colon == std::string::npos ? s : s.substr(colon + 2);
}

Tensor zeros_of(const InputMetadata& m) {
  return zeros(m.shape, TensorOptions().dtype(m.dtype).device(m.device));
}
Tensor empty_placeholder() { return zeros({0}); }

variable_list AutogradContext::get_saved_variables() const {
  auto node = node_.lock();
  variable_list out;
  if (saved_.empty()) return to_save_;  // forward did not need grad: plain tensors
  for (const auto& s : saved_) out.push_back(s.unpack(node));
  return out;
}

void AutogradContext::mark_dirty(const variable_list& inputs) {
  for (const auto& t : inputs) dirty_.insert(t.unsafeGetTensorImpl());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  for (const auto& t : outputs) non_differentiable_.insert(t.unsafeGetTensorImpl());
}

bool AutogradContext::needs_input_grad(size_t i) const {
  return i < needs_input_grad_.size() && needs_input_grad_[i];
}

}  // namespace brasa::autograd
