#pragma once
// Autograd state of a tensor (grad, grad_fn, hooks) and the functions that
// connect tensors to the graph. Ops reach it through record.h.
#include <brasa/autograd/node.h>

namespace brasa::autograd {

struct AutogradMeta : AutogradMetaInterface {
  Tensor grad;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  std::weak_ptr<Node> grad_accumulator;
  uint32_t output_nr = 0;
  // The data version when grad_fn was set: a view whose data changed since
  // (in-place through another view or the base) regenerates its grad_fn.
  uint32_t attr_version = 0;
  bool retains_grad = false;
  std::shared_ptr<Tensor> retained_grad;  // non-leaf grad slot after retain_grad()
  std::shared_ptr<HookList> hooks;
  std::vector<std::function<void(const Tensor&)>> post_accumulate_hooks;
};

AutogradMeta* get_meta(const Tensor& t);
AutogradMeta& materialize_meta(const Tensor& t);

// The edge a gradient for `t` flows into: (grad_fn, output_nr) for results of
// ops, the grad accumulator for leaves that require grad, invalid otherwise.
Edge gradient_edge(const Tensor& t);
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);

// Makes `out` output number `output_nr` of `fn` (which must already have the
// input metadata for it).
void set_history(const Tensor& out, const std::shared_ptr<Node>& fn, uint32_t output_nr);

// After `self` was overwritten in place by the value of `result` (which holds
// the new history), gives `self` that history. For views of a base this
// records a CopySlices node on the base.
void rebase_history(const Tensor& self, const Tensor& result);

// Errors for in-place ops on leaves that require grad (and views of them).
void check_inplace(const Tensor& self, const char* op);

// Clears p.grad(): undefined (set_to_none) or zero-filled without history.
// Shared by Module::zero_grad and Optimizer::zero_grad.
void clear_grad(const Tensor& p, bool set_to_none);

// "[CPUFloatType [16, 128]]"-style description used in messages.
std::string type_description(const Tensor& t);

}  // namespace brasa::autograd
