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
// `l` must be a __grid_constant__ kernel parameter: a scalar operand points
// into it (its strides are 0).
__device__ __forceinline__ char* operand_base(const Loop& l, int k) {
  return l.data[k] ? l.data[k] : const_cast<char*>(l.scalars[k]);
}

template <int N>
__device__ __forceinline__ void operand_pointers(const Loop& l, int64_t i, char* (&p)[N]) {
  if (l.ndim == 1) {
#pragma unroll
    for (int k = 0; k < N; ++k) p[k] = operand_base(l, k) + i * l.strides[k][0];
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
  for (int k = 0; k < N; ++k) p[k] = operand_base(l, k) + off[k];
}

template <int N, class F>
__global__ void elementwise_kernel(const __grid_constant__ Loop l, const F f) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < l.numel; i += step) {
    char* p[N];
    operand_pointers<N>(l, i, p);
    f(p);
  }
}

// An unsigned integer of ES bytes (the unit a vectorised operand is copied in).
template <int ES>
using Bits = std::conditional_t<
    ES == 1, uint8_t,
    std::conditional_t<ES == 2, uint16_t, std::conditional_t<ES == 4, uint32_t, uint64_t>>>;

// Calls f(Bits<es>{}): kernels that only move elements (indexing,
// compaction) are compiled once per element size, not per dtype.
template <class F>
void dispatch_bits(int es, F&& f) {
  switch (es) {
    case 1:
      f(Bits<1>{});
      break;
    case 2:
      f(Bits<2>{});
      break;
    case 4:
      f(Bits<4>{});
      break;
    default:
      f(Bits<8>{});
  }
}

// The flat loop, 16 bytes per operand per thread: each thread loads 16/ES
// elements of every contiguous input in one access, runs f on them in
// registers and stores 16 bytes of output; a single-value input (stride 0)
// is replicated into its register vector. The numel % (16/ES) elements at the
// end go one per thread. Used when every operand has element size ES and is
// 16-byte aligned (vectorizable()).
template <int N, int ES, class F>
__global__ void vectorized_kernel(const __grid_constant__ Loop l, const F f) {
  constexpr int V = 16 / ES;
  using E = Bits<ES>;
  const int64_t n_vec = l.numel / V, items = n_vec + (l.numel - n_vec * V);
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < items; t += step) {
    if (t < n_vec) {
      uint4 buf[N];
#pragma unroll
      for (int k = 1; k < N; ++k) {
        if (l.strides[k][0] != 0) {
          buf[k] = reinterpret_cast<const uint4*>(l.data[k])[t];
        } else {
          const E v = *reinterpret_cast<const E*>(operand_base(l, k));
#pragma unroll
          for (int j = 0; j < V; ++j) reinterpret_cast<E*>(&buf[k])[j] = v;
        }
      }
#pragma unroll
      for (int j = 0; j < V; ++j) {
        char* p[N];
#pragma unroll
        for (int k = 0; k < N; ++k) p[k] = reinterpret_cast<char*>(&buf[k]) + j * ES;
        f(p);
      }
      reinterpret_cast<uint4*>(l.data[0])[t] = buf[0];
    } else {
      const int64_t i = n_vec * V + (t - n_vec);
      char* p[N];
#pragma unroll
      for (int k = 0; k < N; ++k) p[k] = operand_base(l, k) + i * l.strides[k][0];
      f(p);
    }
  }
}

// Whether the flat loop `l` of N operands suits vectorized_kernel<N, ES>.
template <int N>
bool vectorizable(const Loop& l, int es) {
  if (l.ndim != 1) return false;
  for (int k = 0; k < N; ++k) {
    const int64_t st = l.strides[k][0];
    const bool aligned = reinterpret_cast<uintptr_t>(l.data[k]) % 16 == 0;
    if (!((st == es && l.data[k] && aligned) || (k > 0 && st == 0))) return false;
  }
  return true;
}

constexpr unsigned grid_for(int64_t items, int threads) {
  const int64_t blocks = (items + threads - 1) / threads;
  return static_cast<unsigned>(blocks < (1 << 20) ? blocks : (1 << 20));
}

// Runs f over the loop's N operands on stream s (errors are checked by the
// caller). ES > 0: every operand's element has ES bytes, and a flat loop of
// aligned operands takes the vectorised kernel.
template <int N, class F, int ES = 0>
void launch(const Loop& l, const F& f, cudaStream_t s) {
  if (l.numel == 0) return;
  constexpr int kThreads = 256;
  if constexpr (ES == 1 || ES == 2 || ES == 4 || ES == 8) {
    if (vectorizable<N>(l, ES)) {
      const int64_t n_vec = l.numel / (16 / ES);
      vectorized_kernel<N, ES>
          <<<grid_for(n_vec + (l.numel - n_vec * (16 / ES)), kThreads), kThreads, 0, s>>>(l, f);
      return;
    }
  }
  elementwise_kernel<N><<<grid_for(l.numel, kThreads), kThreads, 0, s>>>(l, f);
}

}  // namespace brasa::cuda::kernels
