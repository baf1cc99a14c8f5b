#pragma once
// Device-side storage types, their arithmetic ("accumulate") types and the
// dtype switch shared by the CUDA kernels: half and bfloat16 compute in
// float, everything else in itself.
#include <brasa/ops/cuda/loop.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace brasa::cuda::kernels {

template <class T>
struct AccOf {
  using type = T;
};
template <>
struct AccOf<__half> {
  using type = float;
};
template <>
struct AccOf<__nv_bfloat16> {
  using type = float;
};
template <class T>
using Acc = typename AccOf<T>::type;

template <class T>
constexpr bool is_reduced_float = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

template <class T>
__device__ __forceinline__ Acc<T> to_acc(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return v;
}

// A value of any arithmetic type stored as T (bool: nonzero).
template <class T, class A>
__device__ __forceinline__ T from_acc(A v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != A(0);
  else if constexpr (std::is_same_v<T, __half>)
    return __float2half(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

template <class T>
__device__ __forceinline__ Acc<T> load(const char* p) {
  return to_acc(*reinterpret_cast<const T*>(p));
}
template <class T, class A>
__device__ __forceinline__ void store(char* p, A v) {
  *reinterpret_cast<T*>(p) = from_acc<T>(v);
}

// Calls f(T{}) with T the storage type of `dtype`; false for an unknown code.
template <class F>
bool dispatch(int dtype, F&& f) {
  switch (dtype) {
    case kU8:
      f(uint8_t{});
      return true;
    case kI8:
      f(int8_t{});
      return true;
    case kI16:
      f(int16_t{});
      return true;
    case kI32:
      f(int32_t{});
      return true;
    case kI64:
      f(int64_t{});
      return true;
    case kF16:
      f(__half{});
      return true;
    case kF32:
      f(float{});
      return true;
    case kF64:
      f(double{});
      return true;
    case kBool:
      f(bool{});
      return true;
    case kBF16:
      f(__nv_bfloat16{});
      return true;
    default:
      return false;
  }
}

// The byte offsets of element i of each of N operands.
template <int N>
__device__ __forceinline__ void operand_pointers(const Loop& l, int64_t i, char* (&p)[N]) {
  if (l.ndim == 1) {
#pragma unroll
    for (int k = 0; k < N; ++k) p[k] = l.data[k] + i * l.strides[k][0];
    return;
  }
  int64_t off[N] = {};
  for (int d = l.ndim - 1; d >= 0; --d) {
    const int64_t idx = i % l.sizes[d];
    i /= l.sizes[d];
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += idx * l.strides[k][d];
  }
#pragma unroll
  for (int k = 0; k < N; ++k) p[k] = l.data[k] + off[k];
}

template <int N, class F>
__global__ void elementwise_kernel(const Loop l, const F f) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < l.numel; i += step) {
    char* p[N];
    operand_pointers<N>(l, i, p);
    f(p);
  }
}

// Runs f over the loop's N operands on stream s (errors are checked by the caller).
template <int N, class F>
void launch(const Loop& l, const F& f, cudaStream_t s) {
  if (l.numel == 0) return;
  constexpr int kThreads = 256;
  const int64_t blocks = (l.numel + kThreads - 1) / kThreads;
  const unsigned grid = static_cast<unsigned>(blocks < (1 << 20) ? blocks : (1 << 20));
  elementwise_kernel<N><<<grid, kThreads, 0, s>>>(l, f);
}

}  // namespace brasa::cuda::kernels
