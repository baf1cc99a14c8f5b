#pragma once
// Op codes of the reduction family (ops/reduction.cpp), shared with the
// devices' kernels (ops/cpu/reduction_kernels.cpp). A reduction sees its
// input as rows: a [K, R] contiguous tensor whose rows of R elements reduce
// to one value each.
#include <brasa/tensor/tensor.h>

#include <cstdint>

namespace brasa {

struct RowPlan {
  Tensor rows;  // [K, R] contiguous; [R, K] when `outer`
  int64_t K = 1, R = 1;
  DimVector out_shape;
  // Set when the reduced dims lead and the input is contiguous: rows is the
  // input as is, [R, K] (a kernel may reduce across rows, or transpose).
  bool outer = false;
  // Set (> 0, CPU only) when the reduced dims are one block between kept
  // ones of a contiguous input: rows is that input as is, [K / inner, R,
  // inner], and output k is column k % inner of block k / inner.
  int64_t inner = 0;
};

enum class RowReduction : uint8_t { Sum, Prod, Max, Min, Var, Std, All, Any, Norm, Logsumexp };
struct ReduceOptions {
  bool unbiased = true;  // Var, Std
  double p = 2;          // Norm
};

// out[k] = the reduction of row k; out is [K] contiguous on the rows' device,
// of the rows' dtype (bool or uint8 for All/Any).
struct ReduceRowsKernel {
  static constexpr const char* name = "reduction (sum, max, var, ...)";
  using Fn = void (*)(const RowPlan& plan, const Tensor& out, RowReduction op,
                      const ReduceOptions& options);
};
// out[i] = in_0[i] + in_1[i] + ... + in_{count-1}[i] (in that order) over n
// contiguous float or double elements, divided by count when `average`; out
// may be one of the inputs. The shared-memory collectives reduce with it
// (comm/shm), so the sum runs at the processor's vector width.
struct SumArraysKernel {
  static constexpr const char* name = "sum of arrays";
  using Fn = void (*)(void* out, const void* const* inputs, int count, int64_t n, ScalarType t,
                      bool average);
};
// Values and int64 indices of each row's max (or min); the first NaN wins.
struct ArgExtremeKernel {
  static constexpr const char* name = "max/min along a dim";
  using Fn = void (*)(const RowPlan& plan, const Tensor& values, const Tensor& indices,
                      bool is_max);
};

// Row-by-row maps of a [K, R] contiguous input into an output of its shape.
enum class RowMap : uint8_t { Softmax, LogSoftmax, Cumsum, Cumprod };
struct MapRowsKernel {
  static constexpr const char* name = "softmax/cumsum";
  using Fn = void (*)(const Tensor& in, const Tensor& out, int64_t K, int64_t R, RowMap op);
};
// The same maps along the middle dim of a contiguous [outer, R, inner] input
// (inner > 1), into an output of its shape (optional: without it the dim is
// moved last and back, two transposing copies).
struct MapColumnsKernel {
  static constexpr const char* name = "softmax/cumsum along a middle dim";
  using Fn = void (*)(const Tensor& in, const Tensor& out, int64_t outer, int64_t R, int64_t inner,
                      RowMap op);
};

// The gradient of softmax (log: log_softmax) along the middle dim of
// contiguous [outer, R, inner] tensors, from the op's output y and the
// incoming gradient g, into grad_input of their shape: softmax's is
// y * (g - sum_R(g * y)), log_softmax's g - exp(y) * sum_R(g). One fused
// pass instead of the formula's four or five ops.
struct SoftmaxBackwardKernel {
  static constexpr const char* name = "softmax backward";
  using Fn = void (*)(const Tensor& grad, const Tensor& out, const Tensor& grad_input,
                      int64_t outer, int64_t R, int64_t inner, bool log);
};

}  // namespace brasa
