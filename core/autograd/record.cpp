#include <brasa/autograd/engine.h>
#include <brasa/autograd/record.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>

#include <mutex>
#include <sstream>

namespace brasa::autograd {
namespace {
std::vector<const char*>& name_registry() {
  static std::vector<const char*> names;
  return names;
}
}  // namespace

BackwardName::BackwardName(const char* name) : name_(name) {
  if (name) name_registry().push_back(name);  // null: a row of an op without a derivative
}
const std::vector<const char*>& registered_backward_names() { return name_registry(); }

// ---- SavedVariable ----
SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  defined_ = true;
  is_output_ = is_output;
  saved_version_ = t._version();
  requires_grad_ = t.requires_grad();
  AutogradMeta* m = get_meta(t);
  output_nr_ = m ? m->output_nr : 0;
  if (is_output) {
    data_ = t.detach();  // same data and version counter, no history: no cycle through the node
  } else {
    data_ = t;
    if (m && m->grad_fn)
      producer_ = m->grad_fn;
    else
      is_leaf_ = true;
  }
}

void SavedVariable::reset_data() {
  if (!defined_) return;
  released_ = true;
  data_.reset();
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& owner) const {
  if (!defined_) return Tensor();
  BRASA_CHECK(
      !released_,
      "Trying to backward through the graph a second time (or directly access saved tensors after "
      "they "
      "have already been freed). Saved intermediate values of the graph are freed when you call "
      ".backward() or autograd::grad(). Specify retain_graph=true if you need to backward through "
      "the "
      "graph a second time or if you need to access saved tensors after calling backward.");
  if (data_._version() != saved_version_) {
    std::ostringstream os;
    os << "one of the variables needed for gradient computation has been modified by an inplace "
          "operation: ["
       << type_description(data_) << "]";
    if (is_output_) {
      os << ", which is output " << output_nr_ << " of " << owner->name() << ",";
    } else if (auto p = producer_.lock()) {
      os << ", which is output " << output_nr_ << " of " << p->name() << ",";
    }
    os << " is at version " << data_._version() << "; expected version " << saved_version_
       << " instead. Hint: enable anomaly detection (autograd::DetectAnomalyGuard) to find the "
          "operation that "
          "failed to compute its gradient.";
    BRASA_ERROR(os.str());
  }
  if (is_output_ && requires_grad_ && is_grad_enabled()) {
    // create_graph: the saved output must lead back into the graph.
    Tensor t = data_.detach();
    set_history(t, owner, output_nr_);
    return t;
  }
  return data_;
}

// ---- FormulaNode ----
variable_list FormulaNode::apply(variable_list&& grads) {
  BRASA_CHECK(formula, name(), ": backward formula missing");
  // No gradient at all (e.g. one already added into a leaf's .grad by the
  // node before): nothing flows on, as in PyTorch.
  bool any = false;
  for (const auto& g : grads) any = any || g.defined();
  if (!any && !grads.empty()) return variable_list(num_outputs());
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined()) continue;
    const InputMetadata& m = input_metadata(i);
    grads[i] = zeros(m.shape, TensorOptions().dtype(m.dtype).device(m.device));
  }
  return formula(*this, grads);
}

void FormulaNode::release_variables() {
  for (auto& s : saved_variables) s.reset_data();
}

Tensor FormulaNode::saved(size_t i) {
  BRASA_INTERNAL_ASSERT(i < saved_variables.size(), name(), ": saved tensor ", i,
                        " was never saved");
  return saved_variables[i].unpack(shared_from_this());
}

// ---- Recorder ----
void Recorder::start(const BackwardName& name) {
  node_ = std::make_shared<FormulaNode>(name.c_str());
  no_grad_.emplace();
}

void Recorder::add_input(const Tensor& t) {
  node_->add_next_edge(t.defined() ? gradient_edge(t) : Edge());
}
void Recorder::add_input(const std::optional<Tensor>& t) { add_input(t ? *t : Tensor()); }
void Recorder::add_input(TensorList ts) {
  for (const auto& t : ts) add_input(t);
}

void Recorder::finish(const std::vector<Tensor>& outs, Formula f) {
  node_->formula = std::move(f);
  for (size_t i = 0; i < outs.size(); ++i) {
    const Tensor& out = outs[i];
    if (!out.defined()) {
      node_->add_input_metadata(zeros({0}));
      continue;
    }
    node_->add_input_metadata(out);
    if (isFloatingType(out.dtype()) || isComplexType(out.dtype()))
      set_history(out, node_, static_cast<uint32_t>(i));
  }
  for (const Tensor& t : node_->pending_saves) {
    AutogradMeta* m = t.defined() ? get_meta(t) : nullptr;
    node_->saved_variables.emplace_back(t, m && m->grad_fn == node_);
  }
  node_->pending_saves.clear();
  if (AnomalyMode::is_enabled()) {
    std::ostringstream os;
    os << "the forward op of " << node_->name() << ", which took inputs of shapes";
    for (const auto& e : node_->next_edges()) {
      if (!e.is_valid()) continue;
      const InputMetadata& m = e.function->input_metadata(e.input_nr);
      os << " [";
      for (size_t d = 0; d < m.shape.size(); ++d) os << (d ? ", " : "") << m.shape[d];
      os << "]";
    }
    node_->set_forward_trace(os.str());
  }
  no_grad_.reset();
}

}  // namespace brasa::autograd
