#include <brasa/autograd/engine.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/record.h>
#include <brasa/autograd/variable.h>
#include <brasa/autograd/view_grad.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>

#include <sstream>

namespace brasa::autograd {

AutogradMeta* get_meta(const Tensor& t) {
  return static_cast<AutogradMeta*>(t.unsafeGetTensorImpl()->autograd_meta());
}

AutogradMeta& materialize_meta(const Tensor& t) {
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (!impl->autograd_meta()) impl->set_autograd_meta(std::make_unique<AutogradMeta>());
  return *static_cast<AutogradMeta*>(impl->autograd_meta());
}

namespace {

const std::shared_ptr<Node> kNoNode;

Tensor base_of(const Tensor& view) {
  return Tensor(intrusive_ptr<TensorImpl>(view.unsafeGetTensorImpl()->view_base()));
}

// A view whose data changed since its grad_fn was set gets a fresh one: an
// as_strided view of its base's current history.
void refresh_view_grad_fn(const Tensor& t) {
  TensorImpl* base = t.unsafeGetTensorImpl()->view_base();
  if (!base || !base->requires_grad()) return;
  AutogradMeta* m = get_meta(t);
  const uint32_t version = t._version();
  if (m && m->grad_fn && m->attr_version == version) return;
  // An as_strided node cannot express a view of another dtype.
  BRASA_CHECK(base->dtype() == t.dtype(), "a view_as_real/view_as_complex view (", t.dtype(),
              " of a ", base->dtype(),
              " base) was used in autograd after its base was modified in place; take the view "
              "again after the in-place operation");
  Tensor b = base_of(t);
  auto node = make_as_strided_view_node(b, t);
  AutogradMeta& meta = materialize_meta(t);
  meta.grad_fn = std::move(node);
  meta.output_nr = 0;
  meta.attr_version = version;
}

}  // namespace

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
  AutogradMeta& m = materialize_meta(leaf);
  if (auto acc = m.grad_accumulator.lock()) return acc;
  auto acc = std::make_shared<AccumulateGrad>(leaf);
  if (m.hooks) acc->add_tensor_hooks(0, m.hooks);
  m.grad_accumulator = acc;
  return acc;
}

Edge gradient_edge(const Tensor& t) {
  const auto& fn = t.grad_fn();
  if (fn) return Edge(fn, get_meta(t)->output_nr);
  if (t.unsafeGetTensorImpl()->requires_grad()) return Edge(grad_accumulator(t), 0);
  return Edge();
}

void set_history(const Tensor& out, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  AutogradMeta& m = materialize_meta(out);
  m.grad_fn = fn;
  m.output_nr = output_nr;
  m.attr_version = out._version();
  out.unsafeGetTensorImpl()->set_requires_grad(true);
}

std::string type_description(const Tensor& t) {
  std::ostringstream os;
  os << (t.is_cuda() ? "CUDA" : "CPU") << toString(t.dtype()) << "Type [";
  for (int64_t d = 0; d < t.dim(); ++d) os << (d ? ", " : "") << t.size(d);
  os << "]";
  return os.str();
}

void check_inplace(const Tensor& self, const char* op) {
  TensorImpl* impl = self.unsafeGetTensorImpl();
  TensorImpl* base = impl->view_base();
  if (base) {
    Tensor b = base_of(self);
    BRASA_CHECK(
        !(b.requires_grad() && b.is_leaf()), op,
        ": a view of a leaf Variable that requires grad is being used in an in-place operation.");
    BRASA_CHECK(b.dtype() == self.dtype(), op,
                ": in-place operations that record gradients are not supported on a "
                "view_as_real/view_as_complex view (the view is ",
                self.dtype(), ", its base ", b.dtype(), "); write to a clone");
  } else {
    BRASA_CHECK(!(impl->requires_grad() && self.is_leaf()), op,
                ": a leaf Variable that requires grad is being used in an in-place operation.");
  }
  BRASA_CHECK(!has_internal_overlap(self), op,
              ": unsupported operation: more than one element of the written-to tensor refers to a "
              "single memory "
              "location. Please clone() the tensor before performing the operation.");
}

Tensor snapshot_for_inplace(const Tensor& self) {
  Edge e = gradient_edge(self);
  Tensor copy;
  {
    NoGradGuard g;
    copy = clone(self);
  }
  if (e.is_valid()) set_history(copy, e.function, e.input_nr);
  return copy;
}

void clear_grad(const Tensor& p, bool set_to_none) {
  Tensor& g = p.grad();
  if (!g.defined()) return;
  if (set_to_none) {
    g.reset();
    return;
  }
  NoGradGuard ng;
  g = g.detach();
  g.zero_();
}

void copy_without_grad(Tensor& dst, const Tensor& src) {
  NoGradGuard g;
  copy_(dst, src);
}

void rebase_history(const Tensor& self, const Tensor& result) {
  TensorImpl* impl = self.unsafeGetTensorImpl();
  if (!impl->view_base()) {
    Edge e = gradient_edge(result);
    if (e.is_valid()) set_history(self, e.function, e.input_nr);
    return;
  }
  // self is a view of base: base_new = base_old with self's region replaced by
  // result. The gradient of base_old is the incoming one with that region
  // zeroed; result gets the region.
  Tensor base = base_of(self);
  auto node = make_copy_slices_node(base, self, result);
  set_history(base, node, 0);
}

}  // namespace brasa::autograd

// ---- Tensor's autograd methods ----
namespace brasa {
using namespace autograd;

Tensor& Tensor::requires_grad_(bool r) {
  BRASA_CHECK(!r || is_floating_point() || is_complex(),
              "requires_grad_: only Tensors of floating point and complex dtype can require "
              "gradients, got ",
              dtype());
  BRASA_CHECK(r || is_leaf(),
              "requires_grad_: you can only change requires_grad flags of leaf variables. If you "
              "want to use a "
              "computed variable in a subgraph that doesn't require differentiation use "
              "var_no_grad = var.detach().");
  impl()->set_requires_grad(r);
  return *this;
}

Tensor& Tensor::grad() const {
  AutogradMeta& m = materialize_meta(*this);
  return m.retains_grad ? *m.retained_grad : m.grad;
}

const std::shared_ptr<Node>& Tensor::grad_fn() const {
  refresh_view_grad_fn(*this);
  AutogradMeta* m = get_meta(*this);
  return m ? m->grad_fn : kNoNode;
}

bool Tensor::is_leaf() const { return grad_fn() == nullptr; }

int64_t Tensor::output_nr() const {
  AutogradMeta* m = get_meta(*this);
  return m ? m->output_nr : 0;
}

void Tensor::retain_grad() const {
  BRASA_CHECK(requires_grad(),
              "retain_grad: can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf()) return;
  AutogradMeta& m = materialize_meta(*this);
  if (m.retains_grad) return;
  m.retains_grad = true;
  // The graph holds the gradient slot weakly: it never keeps the tensor's
  // data alive, and a dead tensor's slot is simply skipped.
  m.retained_grad = std::make_shared<Tensor>();
  std::weak_ptr<Tensor> slot = m.retained_grad;
  m.grad_fn->set_retains_grad_hook(m.output_nr, [slot](const Tensor& g) {
    auto s = slot.lock();
    if (!s) return;
    if (!s->defined())
      *s = is_grad_enabled() ? brasa::clone(g) : brasa::clone(g.detach());
    else
      *s = *s + g;
  });
}

bool Tensor::retains_grad() const {
  AutogradMeta* m = get_meta(*this);
  return m && m->retains_grad;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      std::optional<std::vector<Tensor>> inputs) const {
  variable_list grads;
  if (gradient.defined()) grads.push_back(gradient);
  autograd::backward({*this}, grads, retain_graph, create_graph,
                     inputs ? *inputs : variable_list{});
}

Tensor& Tensor::detach_() {
  BRASA_CHECK(!is_view(), "detach_: Can't detach views in-place. Use detach() instead.");
  if (AutogradMeta* m = get_meta(*this)) {
    m->grad_fn.reset();
    m->output_nr = 0;
  }
  impl()->set_requires_grad(false);
  return *this;
}

Tensor Tensor::_base() const {
  TensorImpl* b = impl()->view_base();
  return b ? Tensor(intrusive_ptr<TensorImpl>(b)) : Tensor();
}

unsigned Tensor::add_hook(std::function<Tensor(const Tensor&)> hook) const {
  BRASA_CHECK(requires_grad(),
              "register_hook: cannot register a hook on a tensor that doesn't require gradient");
  AutogradMeta& m = materialize_meta(*this);
  if (!m.hooks) m.hooks = std::make_shared<HookList>();
  unsigned handle = m.hooks->next_handle++;
  m.hooks->hooks.emplace_back(handle, std::move(hook));
  if (const auto& fn = grad_fn())
    fn->add_tensor_hooks(get_meta(*this)->output_nr, m.hooks);
  else
    grad_accumulator(*this)->add_tensor_hooks(0, m.hooks);
  return handle;
}

void Tensor::remove_hook(unsigned handle) const {
  AutogradMeta* m = get_meta(*this);
  BRASA_CHECK(m && m->hooks, "remove_hook: invalid hook handle ", handle);
  auto& hs = m->hooks->hooks;
  for (auto it = hs.begin(); it != hs.end(); ++it)
    if (it->first == handle) {
      hs.erase(it);
      return;
    }
  BRASA_ERROR("remove_hook: invalid hook handle ", handle);
}

void Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const {
  BRASA_CHECK(requires_grad() && is_leaf(),
              "register_post_accumulate_grad_hook: post accumulate grad hooks can only be "
              "registered on leaf "
              "tensors that require grad");
  materialize_meta(*this).post_accumulate_hooks.push_back(std::move(hook));
}

}  // namespace brasa
