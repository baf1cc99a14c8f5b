// The fused optimizer steps: every parameter of a list updated in one
// launch (TensorList), each thread taking elements of one chunk of one
// tensor and doing the whole step for them in registers.
#include <brasa/ops/cuda/device_types.cuh>

namespace brasa::cuda::kernels {
namespace {

constexpr int kThreads = 512;

// This block's tensor and the bounds of its chunk.
struct Chunk {
  int t;
  int64_t lo, hi;
};
__device__ Chunk chunk_of(const TensorList& list) {
  const int t = list.block_tensor[blockIdx.x];
  const int64_t lo = list.block_chunk[blockIdx.x] * kListChunk;
  return {t, lo, min(list.numel[t], lo + kListChunk)};
}

template <class T>
__global__ void sgd_kernel(const __grid_constant__ TensorList list, const SgdArgs a) {
  const auto [t, lo, hi] = chunk_of(list);
  T* p = static_cast<T*>(list.ptrs[0][t]);
  const T* g = static_cast<const T*>(list.ptrs[1][t]);
  T* buf = static_cast<T*>(list.ptrs[2][t]);
  for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    T d = a.maximize ? -g[i] : g[i];
    if (a.weight_decay != 0) d += T(a.weight_decay) * p[i];
    if (a.has_buf) {
      const T b = T(a.momentum) * buf[i] + T(1 - a.dampening) * d;
      buf[i] = b;
      d = a.nesterov ? d + T(a.momentum) * b : b;
    }
    p[i] -= T(a.lr) * d;
  }
}

template <class T>
__global__ void adam_kernel(const __grid_constant__ TensorList list, const AdamArgs a) {
  const auto [t, lo, hi] = chunk_of(list);
  T* p = static_cast<T*>(list.ptrs[0][t]);
  const T* g = static_cast<const T*>(list.ptrs[1][t]);
  T* m = static_cast<T*>(list.ptrs[2][t]);
  T* v = static_cast<T*>(list.ptrs[3][t]);
  T* vmax = static_cast<T*>(list.ptrs[4][t]);
  const T step_size = T(list.step_size[t]), bc2_sqrt = T(list.bc2_sqrt[t]);
  for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    T grad = a.maximize ? -g[i] : g[i];
    T param = p[i];
    if (a.weight_decay != 0) {
      if (a.decoupled)
        param *= T(1 - a.lr * a.weight_decay);
      else
        grad += T(a.weight_decay) * param;
    }
    const T mi = T(a.beta1) * m[i] + T(1 - a.beta1) * grad;
    const T vi = T(a.beta2) * v[i] + T(1 - a.beta2) * (grad * grad);
    m[i] = mi;
    v[i] = vi;
    T second = vi;
    if (a.amsgrad) {
      second = vmax[i] > vi ? vmax[i] : vi;
      vmax[i] = second;
    }
    p[i] = param - step_size * (mi / (sqrt(second) / bc2_sqrt + T(a.eps)));
  }
}

}  // namespace

void launch_fused_sgd(const TensorList& list, const SgdArgs& a, int dtype, cudaStream_t s) {
  if (list.n_blocks == 0) return;
  if (dtype == kF32) sgd_kernel<float><<<list.n_blocks, kThreads, 0, s>>>(list, a);
  if (dtype == kF64) sgd_kernel<double><<<list.n_blocks, kThreads, 0, s>>>(list, a);
}

void launch_fused_adam(const TensorList& list, const AdamArgs& a, int dtype, cudaStream_t s) {
  if (list.n_blocks == 0) return;
  if (dtype == kF32) adam_kernel<float><<<list.n_blocks, kThreads, 0, s>>>(list, a);
  if (dtype == kF64) adam_kernel<double><<<list.n_blocks, kThreads, 0, s>>>(list, a);
}

}  // namespace brasa::cuda::kernels
