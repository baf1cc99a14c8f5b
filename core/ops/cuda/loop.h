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
// flat case. An input whose data is null is a CPU scalar: its value travels
// in `scalars` (the kernel reads it from its parameter space), so an op
// with a number costs no device memory and no copy.
struct Loop {
  int ndim = 0;
  int n_operands = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims] = {};
  char* data[kMaxLoopOperands] = {};
  int64_t strides[kMaxLoopOperands][kMaxDims] = {};
  alignas(16) char scalars[kMaxLoopOperands][16] = {};
};

// Bad input that a kernel finds (a class target out of range), written to
// mapped pinned memory and raised by the host at its next synchronisation
// with the device (cuda/device_error.h). The first report wins: its kernel
// sets `flag` by atomicCAS, then fills in the rest.
struct DeviceErrorSlot {
  int flag;
  int code;  // DeviceErrorCode
  long long value, limit;
};
enum DeviceErrorCode : int { kNoDeviceError = 0, kTargetOutOfBounds = 1 };

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
// Floating dtypes only (others are rejected on the host): (out, start, end, weight).
void launch_lerp(const Loop& l, int dtype, cudaStream_t s);
// (out, self, t1, t2): self + value * t1 * t2, or t1 / t2 with div.
void launch_addc(const Loop& l, int dtype, Number value, bool div, cudaStream_t s);
void launch_clamp(const Loop& l, int dtype, bool has_lo, Number lo, bool has_hi, Number hi,
                  cudaStream_t s);
// (bool out, a, b) in dtype.
void launch_isclose(const Loop& l, int dtype, double rtol, double atol, bool equal_nan,
                    cudaStream_t s);
void launch_nan_to_num(const Loop& l, int dtype, double nan, double posinf, double neginf,
                       cudaStream_t s);

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
// How many blocks share each row (1: a block per row). Few long rows are
// split: their chunks' partials (3 words each, 8 bytes a word) go to
// `scratch`, K * P * 3 words, then are combined.
int64_t split_count(const Rows& rows, int op);
void launch_reduce_rows(const Rows& rows, void* out, int out_dtype, int op, double p, bool unbiased,
                        int64_t P, void* scratch, cudaStream_t s);
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
// nll_loss's class targets (ClassTargetKernel): safe[i] and valid[i] (dtype,
// a floating type) for target[i] of n; a target outside [0, C) (and not
// ignore_index) is reported to `slot`.
void launch_class_targets(const int64_t* target, int64_t n, int64_t C, int64_t ignore_index,
                          int64_t* safe, void* valid, int dtype, DeviceErrorSlot* slot,
                          cudaStream_t s);

}  // namespace brasa::cuda::kernels

namespace brasa::cuda::kernels {

// 2-D windows over planes of H x W (conv's im2col/col2im, max pooling), as
// in ops/kernels/conv.h and pooling.h: N samples of C planes, kernel,
// stride, padding, dilation and the output size OH x OW.
struct Windows {
  int64_t N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW;
};
// cols [C*kh*kw, N*OH*OW] <- the column matrix of x [N, C, H, W] (contiguous;
// float or double): sample n at columns n*OH*OW ...
void launch_im2col(const void* x, void* cols, const Windows& g, int dtype, cudaStream_t s);
// x [N, C, H, W] <- the sum of the column entries at their positions (every
// element written; one thread per element, so no atomics and a fixed order).
void launch_col2im(const void* cols, void* x, const Windows& g, int dtype, cudaStream_t s);
// out [N*C, OH, OW] (and idx, when not null: the flat argmax within each
// plane) <- the max of every window of x; NaN wins, as on the CPU.
void launch_max_pool2d(const void* x, void* out, int64_t* idx, const Windows& g, int dtype,
                       cudaStream_t s);

}  // namespace brasa::cuda::kernels

namespace brasa::cuda::kernels {

// Many tensors in one launch (the fused optimizer steps): block b works on
// chunk block_chunk[b] (kChunk elements) of tensor block_tensor[b]; ptrs[j][t]
// is the j-th tensor of parameter t (param, grad, then the state buffers).
constexpr int kListTensors = 32;
constexpr int kListBlocks = 192;  // keeps TensorList under the 4 KB of kernel parameters
constexpr int64_t kListChunk = 65536;
struct TensorList {
  int n_tensors = 0, n_blocks = 0;
  void* ptrs[5][kListTensors] = {};
  int64_t numel[kListTensors] = {};
  double step_size[kListTensors] = {}, bc2_sqrt[kListTensors] = {};  // Adam's per-tensor terms
  int block_tensor[kListBlocks] = {};
  int block_chunk[kListBlocks] = {};
};
struct SgdArgs {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize, has_buf;
};
struct AdamArgs {
  double beta1, beta2, eps, weight_decay, lr;
  bool decoupled, amsgrad, maximize;
};
// dtype: kF32 or kF64.
void launch_fused_sgd(const TensorList& list, const SgdArgs& a, int dtype, cudaStream_t s);
void launch_fused_adam(const TensorList& list, const AdamArgs& a, int dtype, cudaStream_t s);

}  // namespace brasa::cuda::kernels

namespace brasa::cuda::kernels {

// Advanced indexing (ops/kernels/indexing.h's AdvancedIndex): position i of
// the B-first result is (b, r) = (i / nr, i % nr); its element of self is at
// sum_k wrap(idx_k[b]) * idx_stride[k] + the offset of r over the rest dims
// (row-major). Indices are int64 or int32 (idx_long), already range-checked
// on the host; negative ones wrap. Strides are in bytes.
struct IndexPlan {
  int n_idx = 0, n_rest = 0;
  int64_t nb = 0, nr = 0;
  const void* idx[kMaxDims] = {};
  bool idx_long[kMaxDims] = {};
  int64_t idx_size[kMaxDims] = {}, idx_stride[kMaxDims] = {};
  int64_t rest_size[kMaxDims] = {}, rest_stride[kMaxDims] = {};
};
// out (contiguous, nb * nr elements of elem_size bytes) <- self at the plan.
void launch_index(const IndexPlan& p, const void* self, void* out, int elem_size, cudaStream_t s);
// self at the plan <- values (contiguous), or += atomically with accumulate.
void launch_index_put(const IndexPlan& p, void* self, const void* values, int dtype,
                      bool accumulate, cudaStream_t s);

// Stream compaction (CUB's DeviceSelect), with `count` (the number of set
// flags) known: out <- the elements of `in` (elem_size bytes each) whose flag
// is set, in order; nonzero's out [count, ndim] <- their coordinates in
// `shape`. Scratch from compact_scratch_bytes.
size_t compact_scratch_bytes(int64_t n, int64_t count, int elem_size);
// *count (device memory) <- how many of the n flags are set; scratch from
// count_scratch_bytes.
size_t count_scratch_bytes(int64_t n);
void launch_count_flags(const bool* flags, int64_t n, int64_t* count, void* scratch,
                        size_t scratch_bytes, cudaStream_t s);
void launch_masked_select(const void* in, const bool* flags, void* out, int64_t n, int elem_size,
                          void* scratch, size_t scratch_bytes, cudaStream_t s);
void launch_nonzero(const bool* flags, int64_t count, int64_t* out, int64_t n, const int64_t* shape,
                    int ndim, void* scratch, size_t scratch_bytes, cudaStream_t s);

// Sorting K rows of R (rows [K, R] contiguous, of dtype): vals and idx [K, k]
// get each row's first k values in order and their positions. NaN sorts
// last (first when descending); the sort is stable. Scratch from
// sort_scratch_bytes.
size_t sort_scratch_bytes(int64_t K, int64_t R, int dtype);
void launch_sort_rows(const void* rows, void* vals, int64_t* idx, int64_t K, int64_t R, int64_t k,
                      bool descending, int dtype, void* scratch, size_t scratch_bytes,
                      cudaStream_t s);

// Random numbers from the counter-based Philox4x32-10 generator: element i
// of the contiguous `out` (n elements of dtype) is drawn from the block of
// the counter `offset + i / per_counter(kind, dtype)` under key `seed`, so a
// (seed, offset) pair gives the same numbers whatever the launch shape.
enum RandomKind : int { kUniform, kNormal, kBernoulli, kRandomInt };
int per_counter(int kind, int dtype);
// uniform: [a, b); normal: mean a, std b; bernoulli: b with probability a, else 0;
// random int: a + (64 random bits mod range), range = b as an integer.
void launch_random(void* out, int64_t n, int dtype, int kind, double a, double b, uint64_t range,
                   uint64_t seed, uint64_t offset, cudaStream_t s);

}  // namespace brasa::cuda::kernels
