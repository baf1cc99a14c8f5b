#pragma once
// The launch interface between the CUDA kernel table functions (*.cpp,
// compiled by the host compiler, which read Tensors and plans) and the
// kernels (*.cu, compiled by nvcc, which see only these plain structs): no
// Brasa header reaches nvcc, so the device code stays small and quick to build.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace brasa::cuda::kernels {

constexpr int kMaxDims = 12;
constexpr int kMaxLoopOperands = 4;

// An elementwise loop over `ndim` dims of `sizes` (row-major); operand k's
// element at a multi-index is at data[k] + sum(index[d] * strides[k][d])
// bytes. Operand 0 is the output. ndim 1 with contiguous strides is the
// flat case.
struct Loop {
  int ndim = 0;
  int n_operands = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims] = {};
  char* data[kMaxLoopOperands] = {};
  int64_t strides[kMaxLoopOperands][kMaxDims] = {};
};

// Dtype codes: ScalarType's values (Byte, Char, Short, Int, Long, Half,
// Float, Double, Bool, BFloat16).
enum Dtype : int { kU8, kI8, kI16, kI32, kI64, kF16, kF32, kF64, kBool, kBF16 };

// A number handed to a kernel, in the form its dtype needs.
struct Number {
  double f = 0;
  int64_t i = 0;
};

// Op codes as in ops/kernels/elementwise.h (BinaryOp, CompareOp, BitwiseOp, UnaryOp).
void launch_fill(const Loop& l, int dtype, Number value, cudaStream_t s);
void launch_copy(const Loop& l, int dst_dtype, int src_dtype, cudaStream_t s);
void launch_binary(const Loop& l, int op, int dtype, Number alpha, cudaStream_t s);
void launch_compare(const Loop& l, int op, int dtype, cudaStream_t s);
void launch_bitwise(const Loop& l, int op, int dtype, cudaStream_t s);
// `in_dtype` differs from `dtype` (the output's) only for predicates (bool out).
void launch_unary(const Loop& l, int op, int dtype, int in_dtype, cudaStream_t s);
void launch_where(const Loop& l, int dtype, cudaStream_t s);
void launch_threshold_backward(const Loop& l, int dtype, cudaStream_t s);

}  // namespace brasa::cuda::kernels

namespace brasa::cuda::kernels {

// Reductions of rows (ops/kernels/reduction.h): `in` is [K, R] contiguous, or
// [R, K] when `outer`; out[k] reduces row k. Codes as RowReduction / RowMap.
struct Rows {
  const void* in = nullptr;
  int64_t K = 0, R = 0;
  bool outer = false;
  int dtype = 0;
};
void launch_reduce_rows(const Rows& rows, void* out, int out_dtype, int op, double p, bool unbiased,
                        cudaStream_t s);
void launch_arg_extreme(const Rows& rows, void* values, int64_t* indices, bool is_max,
                        cudaStream_t s);
// out (of in's shape, [K, R] contiguous) = the row map of in.
void launch_map_rows(const Rows& rows, void* out, int op, cudaStream_t s);

}  // namespace brasa::cuda::kernels

namespace brasa::cuda::kernels {

// Gather: operands (out, index, self) where self's stride along the gathered
// dim is 0 and `dim_stride` is that stride in bytes: out = self[index].
void launch_gather(const Loop& l, int64_t dim_stride, int dtype, cudaStream_t s);
// Scatter: operands (self, index, src) likewise: self[index] = src (or += with
// add, atomically).
void launch_scatter(const Loop& l, int64_t dim_stride, int dtype, bool add, cudaStream_t s);

}  // namespace brasa::cuda::kernels
