#pragma once
// How an op records its backward: a Recorder checks once whether any input
// needs a gradient (nothing else happens when none does), runs the forward
// without recording nested ops, and attaches a FormulaNode to the outputs.
//
//   Tensor mul(const Tensor& a, const Tensor& b) {
//     autograd::Recorder r(kMulBackward, a, b);
//     Tensor out = kernel(a, b);
//     if (r) r.save(a, b).finish(out, [](autograd::FormulaNode& n, const autograd::variable_list&
//     g) {
//       return autograd::variable_list{g[0] * n.saved(1), g[0] * n.saved(0)};
//     });
//     return out;
//   }
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/saved_variable.h>
#include <brasa/autograd/variable.h>

#include <optional>

namespace brasa::autograd {

// Every backward formula has a name registered once at start-up; the
// gradcheck table test checks that each registered name is exercised.
class BackwardName {
 public:
  explicit BackwardName(const char* name);
  const char* c_str() const { return name_; }

 private:
  const char* name_;
};
const std::vector<const char*>& registered_backward_names();

class FormulaNode;
// Gets the gradients of the node's outputs (undefined ones replaced by zeros)
// and returns one gradient per input (undefined where not needed).
using Formula = std::function<variable_list(FormulaNode& node, const variable_list& grads)>;

class FormulaNode : public Node {
 public:
  explicit FormulaNode(const char* name) : name_(name) {}
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return name_; }
  void release_variables() override;
  // Saved tensor i (in save order); errors if freed or modified in place.
  Tensor saved(size_t i);
  bool needs(size_t i) const { return should_compute_output(i); }

  Formula formula;
  std::vector<SavedVariable> saved_variables;
  std::vector<Tensor> pending_saves;  // forward side, before the outputs are linked

 private:
  const char* name_;
};

inline bool requires_grad_of(const Tensor& t) {
  return t.defined() && t.unsafeGetTensorImpl()->requires_grad();
}
inline bool requires_grad_of(const std::optional<Tensor>& t) { return t && requires_grad_of(*t); }
inline bool requires_grad_of(TensorList ts) {
  for (const auto& t : ts)
    if (requires_grad_of(t)) return true;
  return false;
}
inline bool requires_grad_of(const std::vector<Tensor>& ts) {
  return requires_grad_of(TensorList(ts));
}

template <class... Ts>
bool needs_grad(const Ts&... ts) {
  return is_grad_enabled() && (requires_grad_of(ts) || ...);
}

class Recorder {
 public:
  template <class... Ts>
  Recorder(const BackwardName& name, const Ts&... inputs) {
    if (!needs_grad(inputs...)) return;
    start(name);
    (add_input(inputs), ...);
  }
  explicit operator bool() const { return node_ != nullptr; }
  FormulaNode& node() { return *node_; }

  // Tensors the formula reads back with node.saved(i), in this order. An
  // output passed here (after finish links it) is stored without a cycle.
  template <class... Ts>
  Recorder& save(const Ts&... ts) {
    (node_->pending_saves.push_back(ts), ...);
    return *this;
  }
  // Links the outputs (floating-point ones; others stay constants) and ends
  // the no-grad region of the forward.
  void finish(const Tensor& out, Formula f) { finish(std::vector<Tensor>{out}, std::move(f)); }
  void finish(const std::vector<Tensor>& outs, Formula f);

 private:
  void start(const BackwardName& name);
  void add_input(const Tensor& t);
  void add_input(const std::optional<Tensor>& t);
  void add_input(TensorList ts);
  void add_input(const std::vector<Tensor>& ts) { add_input(TensorList(ts)); }

  std::shared_ptr<FormulaNode> node_;
  std::optional<NoGradGuard> no_grad_;
};

// Copy of `self`'s data that carries `self`'s current gradient edge: the
// input value of an in-place op, read by its out-of-place formula.
Tensor snapshot_for_inplace(const Tensor& self);
// dst.copy_(src) (casting, broadcasting) with no history recorded.
void copy_without_grad(Tensor& dst, const Tensor& src);

// In-place op under autograd. Without grad: runs `kernel()`. With grad:
// computes the new value out of place with `value(old_self)` (recording its
// formula), writes it into self and gives self that history (CopySlices for
// views).
template <class Kernel, class Value, class... Others>
Tensor& inplace(const char* op, Tensor& self, Kernel&& kernel, Value&& value,
                const Others&... others) {
  if (!needs_grad(self, others...)) {
    kernel();
    return self;
  }
  check_inplace(self, op);
  Tensor result = value(snapshot_for_inplace(self));
  copy_without_grad(self, result);
  rebase_history(self, result);
  return self;
}

}  // namespace brasa::autograd
