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
// "<op>: expected a defined tensor" unless t is defined.
void check_defined(const char* op, const Tensor& t);
// As libtorch: a tensor written to must not have elements that share memory
// (an expanded view): each location would be written more than once.
void check_no_internal_overlap(const char* op, const Tensor& written);
// Same data pointer, sizes, strides and dtype: element i of one is element i of the other.
bool same_view(const Tensor& a, const Tensor& b);
// Whether two views of one storage may touch a common byte (their extents intersect).
bool may_overlap(const Tensor& a, const Tensor& b);
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
  static constexpr int kMaxOperands = 8;  // the output and up to 7 inputs
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
  ArrayRef<Tensor> inputs() const { return {inputs_, n_inputs_}; }
  // Every operand has the output's shape and its dense layout, contiguous or
  // not (or is a single element): then flat_data()[k] and flat_strides()[k] are operand k's data
  // and byte stride in one 1-D run (k = 0 the output, 1.. the inputs; stride 0 for a broadcast
  // single element).
  bool flat() const { return flat_; }
  char* const* flat_data() const { return flat_data_; }
  const int64_t* flat_strides() const { return flat_strides_; }
  const Tensor& result() const { return result_; }
  IntArrayRef shape() const { return shape_; }

 private:
  void place_inputs();
  Tensor allocate_output() const;
  const char* op_;
  ScalarType out_dtype_;
  const Tensor* user_out_;
  bool inplace_;
  Device device_;
  // Inline (no heap allocation per op): ops have one to three inputs.
  Tensor inputs_[kMaxOperands - 1];
  size_t n_inputs_ = 0;
  DimVector shape_;
  Tensor out_, result_;
  bool flat_ = false;
  char* flat_data_[kMaxOperands] = {};
  int64_t flat_strides_[kMaxOperands] = {};
};

}  // namespace brasa::detail
