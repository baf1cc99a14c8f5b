#pragma once
// Custom differentiable functions, as in libtorch:
//
//   struct MulConstant : autograd::Function<MulConstant> {
//     static Tensor forward(autograd::AutogradContext* ctx, Tensor x, double c) {
//       ctx->saved_data["c"] = c;
//       return x * c;
//     }
//     static autograd::variable_list backward(autograd::AutogradContext* ctx,
//     autograd::variable_list g) {
//       return {g[0] * ctx->saved_data["c"].toDouble(), Tensor()};
//     }
//   };
//   Tensor y = MulConstant::apply(x, 5.0);
//
// backward returns one gradient per forward argument (undefined for
// non-tensor arguments and inputs that need none).
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/saved_variable.h>
#include <brasa/autograd/variable.h>
#include <brasa/util/ivalue.h>

#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <variant>

namespace brasa::autograd {

std::string demangled_name(const char* mangled);
Tensor zeros_of(const InputMetadata& m);
Tensor empty_placeholder();

// ctx->saved_data holds IValues (util/ivalue.h).
using IValue = ::brasa::IValue;

class AutogradContext {
 public:
  void save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }
  // Saved tensors, checked for in-place modification since they were saved.
  variable_list get_saved_variables() const;
  void mark_dirty(const variable_list& inputs);
  void mark_non_differentiable(const variable_list& outputs);
  void set_materialize_grads(bool on) { materialize_grads_ = on; }
  bool needs_input_grad(size_t i) const;
  std::unordered_map<std::string, IValue> saved_data;

 private:
  template <class T>
  friend struct Function;
  template <class T>
  friend class CppNode;
  variable_list to_save_;
  std::vector<SavedVariable> saved_;
  std::unordered_set<TensorImpl*> dirty_, non_differentiable_;
  bool materialize_grads_ = true;
  std::weak_ptr<Node> node_;
  std::vector<bool> needs_input_grad_;
};

// The node of a custom function: calls T::backward.
template <class T>
class CppNode : public Node {
 public:
  variable_list apply(variable_list&& grads) override {
    if (ctx_.materialize_grads_) {
      for (size_t i = 0; i < grads.size(); ++i)
        if (!grads[i].defined() && i < num_inputs()) {
          const InputMetadata& m = input_metadata(i);
          grads[i] = zeros_of(m);
        }
    }
    variable_list out = T::backward(&ctx_, grads);
    const size_t expected = is_tensor_arg_.size();
    if (out.size() > expected) {
      for (size_t i = expected; i < out.size(); ++i)
        BRASA_CHECK(!out[i].defined(), "function ", name(),
                    " backward returned an incorrect number of gradients (", "expected ", expected,
                    ", got ", out.size(), ")");
      out.resize(expected);
    }
    BRASA_CHECK(out.size() == expected, "function ", name(),
                " backward returned an incorrect number of gradients (", "expected ", expected,
                ", got ", out.size(), ")");
    // Keep the gradients of tensor arguments only, in edge order.
    variable_list grads_for_edges;
    for (size_t i = 0; i < expected; ++i) {
      if (is_tensor_arg_[i])
        grads_for_edges.push_back(std::move(out[i]));
      else
        BRASA_CHECK(!out[i].defined(), "function ", name(),
                    " backward returned a gradient for non-tensor ", "argument ", i);
    }
    return grads_for_edges;
  }
  std::string name() const override { return demangled_name(typeid(T).name()) + "Backward"; }
  void release_variables() override {
    for (auto& s : ctx_.saved_) s.reset_data();
  }
  AutogradContext ctx_;
  std::vector<bool> is_tensor_arg_;
};

template <class T>
struct Function {
  template <class... Args>
  static auto apply(Args&&... args) {
    auto node = std::make_shared<CppNode<T>>();
    const bool needs = is_grad_enabled() && (arg_requires_grad(args) || ...);
    variable_list inputs;
    (collect(node->is_tensor_arg_, inputs, args), ...);
    node->ctx_.node_ = node;
    for (const auto& t : inputs)
      node->ctx_.needs_input_grad_.push_back(t.defined() && t.requires_grad());
    using Out = decltype(T::forward(&node->ctx_, std::forward<Args>(args)...));
    Out result;
    {
      NoGradGuard g;
      result = T::forward(&node->ctx_, std::forward<Args>(args)...);
    }
    variable_list outs;
    if constexpr (std::is_same_v<Out, Tensor>)
      outs.push_back(result);
    else
      outs = result;
    link(node, inputs, outs, needs);
    if constexpr (std::is_same_v<Out, Tensor>)
      return outs[0];
    else
      return outs;
  }

 private:
  static bool arg_requires_grad(const Tensor& t) { return t.defined() && t.requires_grad(); }
  static bool arg_requires_grad(const variable_list& ts) {
    for (const auto& t : ts)
      if (arg_requires_grad(t)) return true;
    return false;
  }
  template <class A>
  static bool arg_requires_grad(const A&) {
    return false;
  }
  static void collect(std::vector<bool>& is_tensor, variable_list& inputs, const Tensor& t) {
    is_tensor.push_back(true);
    inputs.push_back(t);
  }
  static void collect(std::vector<bool>& is_tensor, variable_list& inputs,
                      const variable_list& ts) {
    for (const auto& t : ts) collect(is_tensor, inputs, t);
  }
  template <class A>
  static void collect(std::vector<bool>& is_tensor, variable_list&, const A&) {
    is_tensor.push_back(false);
  }

  static void link(const std::shared_ptr<Node>& node_base, const variable_list& inputs,
                   variable_list& outs, bool needs) {
    auto* node = static_cast<CppNode<T>*>(node_base.get());
    AutogradContext& ctx = node->ctx_;
    for (size_t i = 0; i < outs.size(); ++i) {
      Tensor& o = outs[i];
      if (!o.defined()) continue;
      // An output that is also an input but not marked dirty is returned as a
      // fresh alias, so that giving it history does not change the input.
      bool is_input = false;
      for (const auto& in : inputs) is_input |= in.defined() && in.is_same(o);
      const bool dirty = ctx.dirty_.count(o.unsafeGetTensorImpl()) > 0;
      if (is_input && !dirty) o = o.detach();
      if (!needs) continue;
      if (dirty) check_inplace(o, "custom Function (mark_dirty)");
    }
    if (!needs) {
      ctx.to_save_.clear();
      return;
    }
    for (const auto& in : inputs) node->add_next_edge(in.defined() ? gradient_edge(in) : Edge());
    for (size_t i = 0; i < outs.size(); ++i) {
      const Tensor& o = outs[i];
      if (!o.defined()) {
        node->add_input_metadata(empty_placeholder());
        continue;
      }
      node->add_input_metadata(o);
      if (ctx.non_differentiable_.count(o.unsafeGetTensorImpl()) ||
          !(o.is_floating_point() || o.is_complex()))
        continue;
      if (ctx.dirty_.count(o.unsafeGetTensorImpl()) && o.is_view()) {
        Tensor r = o.detach();  // written through a view: the base records CopySlices
        set_history(r, node_base, static_cast<uint32_t>(i));
        rebase_history(o, r);
      } else {
        set_history(o, node_base, static_cast<uint32_t>(i));
      }
    }
    for (const auto& t : ctx.to_save_) {
      AutogradMeta* m = t.defined() ? get_meta(t) : nullptr;
      ctx.saved_.emplace_back(t, m && m->grad_fn == node_base);
    }
    ctx.to_save_.clear();
  }
};

}  // namespace brasa::autograd
