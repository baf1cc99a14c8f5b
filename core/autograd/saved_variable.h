#pragma once
// A tensor saved by a forward op for its backward. Remembers the data
// version so that a later in-place change is caught on unpack. An output of
// the node itself is stored without its history (no reference cycle) and
// re-linked to the node on unpack.
#include <brasa/autograd/node.h>

namespace brasa::autograd {

class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);
  // `owner` is the node holding this variable (re-linked for outputs).
  Tensor unpack(const std::shared_ptr<Node>& owner) const;
  void reset_data();
  bool defined() const { return defined_; }

 private:
  Tensor data_;
  std::weak_ptr<Node> producer_;  // grad_fn of a saved input when it was saved (for messages)
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool defined_ = false;
  bool is_output_ = false;
  bool is_leaf_ = false;
  bool requires_grad_ = false;
  bool released_ = false;
};

}  // namespace brasa::autograd
