#include <brasa/autograd/engine.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/variable.h>
#include <brasa/autograd/view_grad.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/unary.h>

#include <queue>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace brasa::autograd {
namespace {

std::atomic<bool> anomaly_enabled{false};

struct GraphTask {
  std::vector<std::function<void()>> callbacks;
  bool accumulates_in_place = false;
  // The gradients gathered for the nodes that have not run yet.
  std::unordered_map<Node*, variable_list>* buffers = nullptr;
};
thread_local GraphTask* current_task = nullptr;

struct ReadyItem {
  Node* node;
  bool operator<(const ReadyItem& o) const { return node->sequence_nr() < o.node->sequence_nr(); }
};

// Whether a gradient of `shape`, dtype and device of `like` may be added
// into `into` in place: nothing else sees its memory (one handle, one owner
// of the storage) and it is dense (in any dim order: a channels-last input
// gradient of a convolution) and of that shape, dtype and device.
bool can_take_sum(const Tensor& into, const Tensor& like, IntArrayRef shape) {
  return into.use_count() == 1 && into.storage().use_count() == 1 && !into.requires_grad() &&
         (into.is_contiguous() || is_non_overlapping_and_dense(into)) && into.sizes() == shape &&
         into.dtype() == like.dtype() && into.device() == like.device();
}
bool can_take_sum(const Tensor& into, const Tensor& other) {
  return can_take_sum(into, other, other.sizes());
}

// Adds a further gradient for one input of a node. Without a graph being
// recorded it sums into whichever of the two no one else sees (as
// PyTorch's InputBuffer), so that a large gradient reached several times
// (an embedding table looked up three times) is not copied for each sum.
void accumulate_input(Tensor& slot, Tensor&& grad) {
  if (!GradMode::is_enabled()) {
    if (can_take_sum(slot, grad)) {
      slot.add_(grad);
      return;
    }
    if (can_take_sum(grad, slot)) {
      grad.add_(slot);
      slot = std::move(grad);
      return;
    }
  }
  slot = slot + grad;
}

std::string shape_str(IntArrayRef s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

// Checks one gradient a node produced against what the receiving input
// expects; un-broadcasts (sum_to) and casts where PyTorch does.
void validate_output(const Node& producer, size_t i, const Edge& edge, Tensor& grad) {
  if (!grad.defined()) return;
  const InputMetadata& m = edge.function->input_metadata(edge.input_nr);
  if (!(grad.sizes() == IntArrayRef(m.shape))) {
    bool expandable = grad.dim() >= static_cast<int64_t>(m.shape.size());
    for (size_t k = 0; expandable && k < m.shape.size(); ++k) {
      int64_t gs =
          grad.size(grad.dim() - static_cast<int64_t>(m.shape.size()) + static_cast<int64_t>(k));
      expandable = m.shape[k] == gs || m.shape[k] == 1;
    }
    BRASA_CHECK(expandable, "Function ", producer.name(), " returned an invalid gradient at index ",
                i, " - got ", shape_str(grad.sizes()), " but expected shape compatible with ",
                shape_str(m.shape));
    grad = sum_to(grad, m.shape);
  }
  BRASA_CHECK(grad.device() == m.device, "Function ", producer.name(),
              " returned an invalid gradient at index ", i, " - expected device ", m.device,
              " but got ", grad.device());
  if (grad.dtype() != m.dtype) grad = grad.to(m.dtype);
}

void check_anomaly(const Node& node, const variable_list& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& g = outputs[i];
    if (!g.defined() || !g.is_floating_point()) continue;
    bool nan;
    {
      NoGradGuard ng;
      nan = isnan(g).any().item<bool>();
    }
    if (nan) {
      std::string where = node.forward_trace().empty()
                              ? std::string(
                                    "(forward op not recorded: the graph was built "
                                    "outside anomaly mode)")
                              : node.forward_trace();
      BRASA_ERROR("Function '", node.name(), "' returned nan values in its ", i,
                  "th output. The node was created by ", where, ".");
    }
  }
}

}  // namespace

Engine& Engine::get_default_engine() {
  static Engine engine;
  return engine;
}

bool Engine::is_running_backward() { return current_task != nullptr; }
bool Engine::accumulates_in_place() { return current_task && current_task->accumulates_in_place; }

Tensor* Engine::pending_gradient(const Edge& edge, const Tensor& like, IntArrayRef shape) {
  if (!current_task || !current_task->buffers || GradMode::is_enabled() || !edge.is_valid())
    return nullptr;
  auto it = current_task->buffers->find(edge.function.get());
  if (it == current_task->buffers->end() || it->second.size() <= edge.input_nr) return nullptr;
  Tensor& slot = it->second[edge.input_nr];
  return slot.defined() && can_take_sum(slot, like, shape) ? &slot : nullptr;
}

void Engine::queue_callback(std::function<void()> fn) {
  BRASA_CHECK(current_task,
              "queue_callback: final callbacks can only be installed during the backward pass.");
  current_task->callbacks.push_back(std::move(fn));
}

variable_list Engine::execute(const std::vector<Edge>& roots, const variable_list& grads,
                              bool keep_graph, bool create_graph, bool accumulate_grad,
                              const std::vector<Edge>& outputs) {
  auto root = std::make_shared<GraphRoot>(roots, grads);

  // Dependencies: how many gradients each node waits for.
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack{root.get()};
  std::unordered_set<Node*> seen{root.get()};
  std::vector<Node*> order;  // discovery order, for the "needed" pass
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (const auto& e : n->next_edges()) {
      if (!e.is_valid()) continue;
      Node* next = e.function.get();
      ++deps[next];
      if (seen.insert(next).second) stack.push_back(next);
    }
  }

  // With explicit outputs, only nodes from which one of them is reachable run.
  std::unordered_set<Node*> needed;
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>>
      captures;  // node -> (input_nr, output index)
  const bool restricted = !outputs.empty();
  if (restricted) {
    for (size_t k = 0; k < outputs.size(); ++k)
      if (outputs[k].is_valid())
        captures[outputs[k].function.get()].push_back({outputs[k].input_nr, k});
    // A node is needed if it is captured or any successor is needed; a fixed
    // point over the discovery order (reverse topological enough to converge).
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        Node* n = *it;
        if (needed.count(n)) continue;
        bool need = captures.count(n) > 0;
        for (const auto& e : n->next_edges())
          if (e.is_valid() && needed.count(e.function.get())) need = true;
        if (need) {
          needed.insert(n);
          changed = true;
        }
      }
    }
  }

  GraphTask task;
  task.accumulates_in_place =
      accumulate_grad && !restricted && !create_graph && !AnomalyMode::is_enabled();
  GraphTask* outer = current_task;
  current_task = &task;
  struct Restore {
    GraphTask* outer;
    ~Restore() { current_task = outer; }
  } restore{outer};
  AutoGradMode mode(create_graph);

  variable_list captured(outputs.size());
  std::unordered_map<Node*, variable_list> buffers;
  task.buffers = &buffers;
  std::priority_queue<ReadyItem> ready;
  buffers[root.get()] = {};
  ready.push({root.get()});
  const bool anomaly = AnomalyMode::is_enabled();

  while (!ready.empty()) {
    Node* node = ready.top().node;
    ready.pop();
    variable_list inputs = std::move(buffers[node]);
    buffers.erase(node);
    if (restricted && !needed.count(node)) continue;
    node->run_tensor_hooks(inputs);

    if (restricted) {
      auto c = captures.find(node);
      if (c != captures.end())
        for (auto [input_nr, k] : c->second)
          captured[k] = input_nr < inputs.size() ? inputs[input_nr] : Tensor();
      // A captured leaf accumulator only collects (autograd::grad); with
      // accumulate_grad (backward(inputs=...)) it runs.
      bool is_accumulator = dynamic_cast<AccumulateGrad*>(node) != nullptr;
      if (is_accumulator && !accumulate_grad) continue;
    }

    variable_list outs = node->apply(std::move(inputs));
    if (!keep_graph) node->release_variables();
    if (anomaly) check_anomaly(*node, outs);

    const auto& edges = node->next_edges();
    BRASA_CHECK(outs.size() == edges.size() || edges.empty(), "Function ", node->name(),
                " returned ", outs.size(), " gradients but expected ", edges.size());
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.is_valid()) continue;
      Node* next = e.function.get();
      validate_output(*node, i, e, outs[i]);
      auto& buf = buffers[next];
      if (buf.size() < next->num_inputs()) buf.resize(next->num_inputs());
      Tensor& slot = buf[e.input_nr];
      if (!slot.defined())
        slot = std::move(outs[i]);
      else if (outs[i].defined())
        accumulate_input(slot, std::move(outs[i]));
      if (--deps[next] == 0) ready.push({next});
    }
  }

  // Callbacks may queue more callbacks.
  for (size_t i = 0; i < task.callbacks.size(); ++i) {
    auto cb = std::move(task.callbacks[i]);
    cb();
  }
  return captured;
}

namespace {

variable_list make_root_grads(const variable_list& tensors, const variable_list& grad_tensors,
                              const char* api) {
  BRASA_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(), api, ": got ",
              tensors.size(), " tensors and ", grad_tensors.size(), " gradients");
  variable_list grads;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    Tensor g = grad_tensors.empty() ? Tensor() : grad_tensors[i];
    if (!g.defined()) {
      BRASA_CHECK(t.numel() == 1, "grad can be implicitly created only for scalar outputs (", api,
                  ": output ", i, " has shape ", t.sizes(), "; pass a gradient of that shape)");
      g = ones_like(t);
    } else {
      BRASA_CHECK(g.sizes() == t.sizes(), "Mismatch in shape: grad_output[", i, "] has a shape of ",
                  g.sizes(), " and output[", i, "] has a shape of ", t.sizes(), ".");
      BRASA_CHECK(g.device() == t.device(), "invalid gradient at index ", i, " - expected device ",
                  t.device(), " but got ", g.device());
    }
    grads.push_back(std::move(g));
  }
  return grads;
}

std::vector<Edge> root_edges(const variable_list& tensors) {
  std::vector<Edge> edges;
  for (size_t i = 0; i < tensors.size(); ++i) {
    BRASA_CHECK(tensors[i].defined(), "backward: output ", i, " is undefined");
    BRASA_CHECK(tensors[i].requires_grad(), "element ", i,
                " of tensors does not require grad and does not have a grad_fn");
    edges.push_back(gradient_edge(tensors[i]));
  }
  return edges;
}

}  // namespace

void backward(const variable_list& tensors, const variable_list& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph, const variable_list& inputs) {
  variable_list grads = make_root_grads(tensors, grad_tensors, "backward");
  std::vector<Edge> roots = root_edges(tensors);
  std::vector<Edge> outs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    BRASA_CHECK(inputs[i].requires_grad(), "backward: input ", i, " does not require grad");
    outs.push_back(gradient_edge(inputs[i]));
  }
  bool keep = retain_graph.value_or(create_graph);
  variable_list got =
      Engine::get_default_engine().execute(roots, grads, keep, create_graph, true, outs);
  // Non-leaf inputs get their gradient in .grad(), like PyTorch.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_leaf() || !got[i].defined()) continue;
    Tensor& g = inputs[i].grad();
    g = g.defined() ? g + got[i] : got[i];
  }
}

variable_list grad(const variable_list& outputs, const variable_list& inputs,
                   const variable_list& grad_outputs, std::optional<bool> retain_graph,
                   bool create_graph, bool allow_unused) {
  variable_list grads = make_root_grads(outputs, grad_outputs, "grad");
  std::vector<Edge> roots = root_edges(outputs);
  std::vector<Edge> outs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    BRASA_CHECK(inputs[i].requires_grad(), "grad: One of the differentiated Tensors (input ", i,
                ") does not require grad");
    outs.push_back(gradient_edge(inputs[i]));
  }
  bool keep = retain_graph.value_or(create_graph);
  variable_list got =
      Engine::get_default_engine().execute(roots, grads, keep, create_graph, false, outs);
  for (size_t i = 0; i < got.size(); ++i) {
    BRASA_CHECK(got[i].defined() || allow_unused, "grad: One of the differentiated Tensors (input ",
                i,
                ") appears to not have been used in the graph. Set allow_unused=true if this is "
                "the desired "
                "behavior.");
    // Gradients are returned in the inputs' own shape and dtype.
    if (got[i].defined() && !(got[i].sizes() == inputs[i].sizes()))
      got[i] = sum_to(got[i], inputs[i].sizes());
  }
  return got;
}

bool AnomalyMode::is_enabled() { return anomaly_enabled.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool on) { anomaly_enabled.store(on); }
DetectAnomalyGuard::DetectAnomalyGuard() : prev_(AnomalyMode::is_enabled()) {
  AnomalyMode::set_enabled(true);
}
DetectAnomalyGuard::~DetectAnomalyGuard() { AnomalyMode::set_enabled(prev_); }

}  // namespace brasa::autograd
