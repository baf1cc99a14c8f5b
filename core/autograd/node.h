#pragma once
// The autograd graph: a Node is the backward of one forward op; its
// next_edges point at the Nodes that produced the op's inputs (Edge = node +
// which of that node's inputs the gradient feeds).
#include <brasa/tensor/tensor.h>
#include <brasa/util/small_vector.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace brasa::autograd {

using variable_list = std::vector<Tensor>;
using tensor_list = std::vector<Tensor>;
class Node;

struct Edge {
  Edge() = default;
  Edge(std::shared_ptr<Node> fn, uint32_t nr) : function(std::move(fn)), input_nr(nr) {}
  bool is_valid() const { return function != nullptr; }
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
};

// What a gradient flowing into a Node's input must look like: the shape,
// dtype and device of the forward tensor it is the gradient of.
struct InputMetadata {
  DimVector shape;
  ScalarType dtype = ScalarType::Undefined;
  Device device;
};

// A hook on the gradient of one tensor: may return a replacement (or an
// undefined tensor to keep the gradient as is).
using TensorHook = std::function<Tensor(const Tensor&)>;
struct HookList {
  std::vector<std::pair<unsigned, TensorHook>> hooks;  // (handle, hook), in registration order
  unsigned next_handle = 0;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  explicit Node(uint64_t sequence_nr) : sequence_nr_(sequence_nr) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual variable_list apply(variable_list&& grads) = 0;
  virtual std::string name() const = 0;
  // Drops saved tensors after a backward without retain_graph.
  virtual void release_variables() {}

  variable_list operator()(variable_list&& grads) { return apply(std::move(grads)); }

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  const Edge& next_edge(size_t i) const { return next_edges_[i]; }
  size_t num_outputs() const { return next_edges_.size(); }
  void add_next_edge(Edge e) { next_edges_.push_back(std::move(e)); }
  // True when the gradient for forward input i is wanted by someone.
  bool should_compute_output(size_t i) const {
    return i < next_edges_.size() && next_edges_[i].is_valid();
  }

  size_t num_inputs() const { return input_metadata_.size(); }
  uint32_t add_input_metadata(const Tensor& t);
  const InputMetadata& input_metadata(size_t i) const { return input_metadata_[i]; }

  uint64_t sequence_nr() const { return sequence_nr_; }

  // Tensor hooks of the forward output with this output_nr (run before apply).
  void add_tensor_hooks(unsigned output_nr, std::shared_ptr<HookList> hooks);
  void set_retains_grad_hook(unsigned output_nr, std::function<void(const Tensor&)> fn);
  // Applies the hooks to the incoming gradients (engine use).
  void run_tensor_hooks(variable_list& grads);
  // True when any tensor or retain_grad hook would see this node's gradients.
  bool has_hooks() const;

  // True for a node whose one gradient is the 2-D transpose of the incoming
  // one (t()): a matrix product's backward may look through it to a leaf's
  // gradient sink (fusable_leaf_grad).
  bool transposes_gradient_2d() const { return transposes_gradient_2d_; }
  void set_transposes_gradient_2d() { transposes_gradient_2d_ = true; }

  // Anomaly mode: a description of the forward call that created the node.
  const std::string& forward_trace() const { return forward_trace_; }
  void set_forward_trace(std::string s) { forward_trace_ = std::move(s); }

 protected:
  uint64_t sequence_nr_;
  std::vector<Edge> next_edges_;
  std::vector<InputMetadata> input_metadata_;
  std::vector<std::pair<unsigned, std::shared_ptr<HookList>>> tensor_hooks_;
  std::vector<std::pair<unsigned, std::function<void(const Tensor&)>>> retains_grad_hooks_;
  std::string forward_trace_;
  bool transposes_gradient_2d_ = false;
};

// Sink for a leaf tensor: adds the incoming gradient into leaf.grad(), then
// runs the leaf's post-accumulate-grad hooks.
//
// It is also an explicit gradient sink: a backward formula whose gradient
// reaches this node may add it into the existing .grad itself (a GEMM with
// beta = 1) instead of returning it. It asks in_place_target() for the
// tensor to add into and, having added, calls accumulated_in_place(); the
// post-accumulate hooks then run when this node runs, after every
// contribution, exactly as for a gradient passed the ordinary way.
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }
  const Tensor& variable() const { return variable_; }
  // The leaf's .grad when a gradient of `dtype` and `shape` may be added into
  // it in place: defined, contiguous (a view into a larger buffer is fine,
  // as DDP's bucket views are), not itself requiring grad, and no tensor
  // hook on the leaf that would have to see the gradient first. Null
  // otherwise.
  Tensor* in_place_target(ScalarType dtype, IntArrayRef shape);
  void accumulated_in_place();

 private:
  void run_post_accumulate_hooks();
  Tensor variable_;
  bool accumulated_in_place_ = false;
};

// Source of a backward pass: hands the user's gradients to the roots.
class GraphRoot : public Node {
 public:
  GraphRoot(std::vector<Edge> roots, variable_list grads);
  variable_list apply(variable_list&&) override { return grads_; }
  std::string name() const override { return "GraphRoot"; }

 private:
  variable_list grads_;
};

// For a backward that can add its gradient for output `i` straight into a
// leaf's existing .grad (a GEMM with beta = 1 instead of a product and then
// an add): the leaf's gradient sink, when the gradient would reach it
// directly or through one 2-D transpose (w.t() in a linear layer), the
// running backward accumulates into leaves (no create_graph, no inputs=, no
// anomaly mode) and no tensor hook watches in between. `transposed` tells
// whether the .grad receives the transpose of the gradient. The caller adds
// into sink->in_place_target(...), calls sink->accumulated_in_place() and
// returns an undefined gradient for output i. Null when any of that does
// not hold.
struct FusableGrad {
  AccumulateGrad* sink = nullptr;
  Tensor* grad = nullptr;
  bool transposed = false;
  explicit operator bool() const { return grad != nullptr; }
};
FusableGrad fusable_leaf_grad(const Node& node, size_t i, ScalarType dtype);
// How many gradients this process has added into a .grad in place (tests use
// it to tell the fused path from the ordinary one, whose results are equal).
uint64_t in_place_accumulation_count();

// "Reduce" a gradient to `shape` by summing over broadcast dimensions.
Tensor sum_to(const Tensor& grad, IntArrayRef shape);

}  // namespace brasa::autograd
