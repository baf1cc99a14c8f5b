#include <brasa/autograd/engine.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/node.h>
#include <brasa/autograd/variable.h>
#include <brasa/autograd/view_grad.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>

#include <atomic>
#include <limits>

namespace brasa::autograd {
namespace {
// Nodes created later run earlier; a per-thread counter suffices because a
// graph is built by one thread at a time.
thread_local uint64_t next_sequence_nr = 0;
}  // namespace

namespace detail {
thread_local bool grad_enabled = true;
thread_local bool inference_mode = false;
}  // namespace detail

Node::Node() : sequence_nr_(next_sequence_nr++) {}

uint32_t Node::add_input_metadata(const Tensor& t) {
  InputMetadata m;
  m.shape.assign(t.sizes().begin(), t.sizes().end());
  m.dtype = t.dtype();
  m.device = t.device();
  input_metadata_.push_back(std::move(m));
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

void Node::add_tensor_hooks(unsigned output_nr, std::shared_ptr<HookList> hooks) {
  for (auto& [nr, h] : tensor_hooks_)
    if (nr == output_nr && h == hooks) return;
  tensor_hooks_.emplace_back(output_nr, std::move(hooks));
}

void Node::set_retains_grad_hook(unsigned output_nr, std::function<void(const Tensor&)> fn) {
  for (auto& [nr, f] : retains_grad_hooks_)
    if (nr == output_nr) {
      f = std::move(fn);
      return;
    }
  retains_grad_hooks_.emplace_back(output_nr, std::move(fn));
}

void Node::run_tensor_hooks(variable_list& grads) {
  for (auto& [nr, list] : tensor_hooks_) {
    if (nr >= grads.size()) continue;
    // Copy: a hook may register or remove hooks.
    auto hooks = list->hooks;
    for (auto& [handle, hook] : hooks) {
      if (!grads[nr].defined()) break;
      Tensor r = hook(grads[nr]);
      if (r.defined()) grads[nr] = std::move(r);
    }
  }
  // retain_grad() hooks run after all others and see the final gradient.
  for (auto& [nr, fn] : retains_grad_hooks_)
    if (nr < grads.size() && grads[nr].defined()) fn(grads[nr]);
}

bool Node::has_hooks() const {
  if (!retains_grad_hooks_.empty()) return true;
  for (const auto& [nr, list] : tensor_hooks_)
    if (!list->hooks.empty()) return true;
  return false;
}

// ---- AccumulateGrad ----
AccumulateGrad::AccumulateGrad(Tensor variable)
    : Node(std::numeric_limits<uint64_t>::max()), variable_(std::move(variable)) {
  add_input_metadata(variable_);
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor g = std::move(grads[0]);
  if (!g.defined()) {
    // Every contribution was added in place (or none came).
    if (accumulated_in_place_) run_post_accumulate_hooks();
    return {};
  }
  AutogradMeta& meta = materialize_meta(variable_);
  Tensor& acc = meta.grad;
  if (!acc.defined()) {
    // As PyTorch's layout contract: the gradient of a dense variable has its
    // strides (a channels-last weight or input gets a channels-last .grad);
    // of any other, contiguous ones.
    const DimVector layout = dense_strides_like(variable_);
    bool has_layout = g.sizes() == variable_.sizes();
    for (int64_t d = 0; has_layout && d < g.dim(); ++d)
      has_layout = g.size(d) == 1 || g.stride(d) == layout[d];
    // Steal the incoming buffer when nobody else can see it.
    bool private_buffer = g.use_count() == 1 && g.storage().use_count() == 1 && has_layout &&
                          g.storage_offset() == 0 && !g.requires_grad();
    if (!is_grad_enabled() && private_buffer) {
      acc = std::move(g);
    } else if (is_grad_enabled()) {
      acc = clone(g);
    } else {
      acc = empty_strided(variable_.sizes(), layout, g.options());
      acc.copy_(g.detach());
    }
  } else if (!is_grad_enabled()) {
    acc.add_(g);
  } else {
    acc = acc + g;
  }
  run_post_accumulate_hooks();
  return {};
}

namespace {
std::atomic<uint64_t> g_in_place_accumulations{0};
}
uint64_t in_place_accumulation_count() { return g_in_place_accumulations.load(); }

void AccumulateGrad::accumulated_in_place() {
  accumulated_in_place_ = true;
  g_in_place_accumulations.fetch_add(1, std::memory_order_relaxed);
}

void AccumulateGrad::run_post_accumulate_hooks() {
  accumulated_in_place_ = false;
  AutogradMeta& meta = materialize_meta(variable_);
  for (auto& hook : meta.post_accumulate_hooks) hook(variable_);
}

Tensor* AccumulateGrad::in_place_target(ScalarType dtype, IntArrayRef shape) {
  if (has_hooks()) return nullptr;
  AutogradMeta& meta = materialize_meta(variable_);
  Tensor& acc = meta.grad;
  if (!acc.defined() || acc.requires_grad() || acc.dtype() != dtype || !(acc.sizes() == shape) ||
      !acc.is_contiguous())
    return nullptr;
  return &acc;
}

FusableGrad fusable_leaf_grad(const Node& node, size_t i, ScalarType dtype) {
  FusableGrad r;
  if (!Engine::accumulates_in_place() || !node.should_compute_output(i)) return r;
  Node* next = node.next_edge(i).function.get();
  if (next->transposes_gradient_2d() && next->num_outputs() == 1 &&
      next->should_compute_output(0) && !next->has_hooks()) {
    r.transposed = true;
    next = next->next_edge(0).function.get();
  }
  auto* acc = dynamic_cast<AccumulateGrad*>(next);
  if (!acc) return r;
  const DimVector& shape =
      node.next_edge(i).function->input_metadata(node.next_edge(i).input_nr).shape;
  DimVector leaf_shape = shape;
  if (r.transposed) std::swap(leaf_shape[0], leaf_shape[1]);
  r.grad = acc->in_place_target(dtype, leaf_shape);
  if (r.grad) r.sink = acc;
  return r;
}

// ---- GraphRoot ----
GraphRoot::GraphRoot(std::vector<Edge> roots, variable_list grads) : grads_(std::move(grads)) {
  for (auto& e : roots) add_next_edge(std::move(e));
}

Tensor sum_to(const Tensor& grad, IntArrayRef shape) {
  if (grad.sizes() == shape) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  BRASA_CHECK(lead >= 0, "sum_to: gradient of shape ", grad.sizes(), " cannot be reduced to ",
              shape);
  DimVector dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t gs = grad.size(lead + static_cast<int64_t>(i));
    if (shape[i] == 1 && gs != 1)
      dims.push_back(lead + static_cast<int64_t>(i));
    else
      BRASA_CHECK(shape[i] == gs, "sum_to: gradient of shape ", grad.sizes(),
                  " cannot be reduced to ", shape);
  }
  Tensor r = dims.empty() ? grad : sum(grad, dims, /*keepdim=*/true);
  return lead > 0 || r.dim() != static_cast<int64_t>(shape.size()) ? r.view(shape) : r;
}

}  // namespace brasa::autograd
