#pragma once
// Shared preparation of elementwise ops: PyTorch's type promotion, broadcasting,
// output allocation or validation (for in-place and _out forms) and the loop.
#include <brasa/tensor/tensor.h>

#include <vector>

namespace brasa::detail {

// How an operand takes part in type promotion: tensors with dims outrank
// 0-dim tensors, which outrank plain numbers, within a category.
enum class Priority { Dim, ZeroDim, Number };
struct TypedOperand {
  ScalarType dtype;
  Priority priority;
};
ScalarType result_type(std::initializer_list<TypedOperand> ops);
inline TypedOperand operand(const Tensor& t) {
  return {t.dtype(), t.dim() == 0 ? Priority::ZeroDim : Priority::Dim};
}
inline TypedOperand operand(const Scalar& s) { return {s.type(), Priority::Number}; }
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);
// PyTorch's can_cast: no float -> integral, no non-bool -> bool.
bool can_cast(ScalarType from, ScalarType to);

DimVector broadcast_shapes(const char* op, IntArrayRef a, IntArrayRef b);
Tensor scalar_tensor_of(const Scalar& s, ScalarType t);
// A number used with `self` as a 0-dim tensor of their promoted dtype, so that
// it takes part in promotion as a number (x_int32 + 2.5 is float32).
Tensor wrap_number(const Tensor& self, const Scalar& s);

// The device-neutral plan of an elementwise op: the inputs (cast to their
// compute dtype), the broadcast shape, and the output (allocated on the
// inputs' device, or the user's out= tensor, or a temporary when that one
// overlaps an input or needs a cast). A device's kernel reads the plan and
// writes output(); finish() then moves the values into the user's tensor.
// The CPU runner is ops/cpu/elementwise_run.h.
class Elementwise {
 public:
  // `out` may be null (allocate), a defined tensor (write there, casting if
  // needed) — `inplace` says it is also the first input (no resizing allowed).
  Elementwise(const char* op, ScalarType out_dtype, const Tensor* out = nullptr,
              bool inplace = false)
      : op_(op), out_dtype_(out_dtype), user_out_(out), inplace_(inplace) {}
  Elementwise& input(const Tensor& t, ScalarType dtype);
  Elementwise& input(const Tensor& t) { return input(t, t.dtype()); }
  // Computes the shape and allocates the output.
  Elementwise& build();
  // Call after the kernel wrote output().
  void finish();

  const char* op() const { return op_; }
  Device device() const { return device_; }
  const Tensor& output() const { return out_; }
  const std::vector<Tensor>& inputs() const { return inputs_; }
  // Every operand is contiguous with the output's shape (or a single element).
  bool flat() const { return flat_; }
  const Tensor& result() const { return result_; }
  IntArrayRef shape() const { return shape_; }

 private:
  void place_inputs();
  const char* op_;
  ScalarType out_dtype_;
  const Tensor* user_out_;
  bool inplace_;
  Device device_;
  std::vector<Tensor> inputs_;
  DimVector shape_;
  Tensor out_, result_;
  bool flat_ = false;
};

}  // namespace brasa::detail
