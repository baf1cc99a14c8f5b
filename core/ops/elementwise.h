#pragma once
// Shared preparation of elementwise ops: PyTorch's type promotion, broadcasting,
// output allocation or validation (for in-place and _out forms) and the loop.
#include <brasa/ops/cpu/loops.h>
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

class Elementwise {
 public:
  // `out` may be null (allocate), a defined tensor (write there, casting if
  // needed) — `inplace` says it is also the first input (no resizing allowed).
  Elementwise(const char* op, ScalarType out_dtype, const Tensor* out = nullptr,
              bool inplace = false)
      : op_(op), out_dtype_(out_dtype), user_out_(out), inplace_(inplace) {}
  Elementwise& input(const Tensor& t, ScalarType dtype);
  Elementwise& input(const Tensor& t) { return input(t, t.dtype()); }
  // Computes the shape, allocates the output and sets up the loop.
  Elementwise& build();

  template <class Out, class... In, class F>
  void run(const F& f) {
    if (flat_) {
      // Every operand is contiguous with the output's shape (or a single
      // element): one 1-D run, no strided loop to set up.
      const int64_t n = out_.numel();
      bool stream = false;
      if constexpr (sizeof...(In) == 1 || sizeof...(In) == 2)
        stream = cpu::stream_output(n * int64_t(sizeof(Out)), flat_data_[0], flat_data_[1],
                                    flat_data_[2]);
      parallel_for(0, n, cpu::kGrain, [&](int64_t b, int64_t e) {
        char* ptrs[cpu::kMaxOperands];
        for (size_t k = 0; k <= inputs_.size(); ++k) ptrs[k] = flat_data_[k] + b * flat_strides_[k];
        if constexpr (sizeof...(In) == 2)
          cpu::binary_run<Out, In...>(ptrs, flat_strides_, e - b, f, stream);
        else if constexpr (sizeof...(In) == 1)
          cpu::unary_run<Out, In...>(ptrs, flat_strides_, e - b, f, stream);
        else
          cpu::nary_run<Out, In...>(ptrs, flat_strides_, e - b, f,
                                    std::index_sequence_for<In...>{});
      });
    } else {
      cpu::cpu_kernel<Out, In...>(*loop_, f);
    }
    finish();
  }
  cpu::StridedLoop& loop();
  // Call after driving loop() directly.
  void finish();
  const Tensor& result() const { return result_; }
  IntArrayRef shape() const { return shape_; }

 private:
  const char* op_;
  ScalarType out_dtype_;
  const Tensor* user_out_;
  bool inplace_;
  std::vector<Tensor> inputs_;
  DimVector shape_;
  Tensor out_, result_;
  std::optional<cpu::StridedLoop> loop_;
  bool flat_ = false;
  char* flat_data_[cpu::kMaxOperands] = {};
  int64_t flat_strides_[cpu::kMaxOperands] = {};
};

}  // namespace brasa::detail
