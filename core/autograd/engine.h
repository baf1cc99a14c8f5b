#pragma once
// The backward engine: counts dependencies in one walk of the graph, then
// runs nodes from a ready queue ordered by sequence number (latest first;
// leaf accumulators as soon as they are ready), summing gradients per input.
#include <brasa/autograd/node.h>

#include <optional>

namespace brasa::autograd {

class Engine {
 public:
  static Engine& get_default_engine();

  // roots: edges to start from, with their gradients. With `outputs`
  // non-empty only the part of the graph leading to them runs and the
  // gradients arriving there are returned (no accumulation into leaves
  // unless accumulate_grad).
  variable_list execute(const std::vector<Edge>& roots, const variable_list& grads, bool keep_graph,
                        bool create_graph, bool accumulate_grad,
                        const std::vector<Edge>& outputs = {});

  // Runs `fn` once when the current backward pass ends, on its thread.
  void queue_callback(std::function<void()> fn);
  // True while a backward pass runs on this thread.
  static bool is_running_backward();
  // True while the backward on this thread adds into leaves' .grad with grad
  // mode off, over the whole graph, outside anomaly mode: a node may then add
  // its gradient into a leaf's .grad itself (see fusable_leaf_grad).
  static bool accumulates_in_place();
  // The gradient the running backward has gathered so far for `edge` (from
  // other uses of the same tensor), when a node may add its own gradient
  // for that edge, of `shape` and like's dtype and device, into it in place
  // and pass on an undefined gradient instead: no graph is being recorded
  // and that gradient is private and dense. Null otherwise. (An embedding
  // looked up several times then builds one dense gradient, not one each.)
  static Tensor* pending_gradient(const Edge& edge, const Tensor& like, IntArrayRef shape);
};

void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const variable_list& inputs = {});

variable_list grad(const variable_list& outputs, const variable_list& inputs,
                   const variable_list& grad_outputs = {},
                   std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                   bool allow_unused = false);

// Anomaly mode: nodes remember the forward op that created them, and a
// backward that produces NaN names that op.
class AnomalyMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool on);
};
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard();
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace brasa::autograd
