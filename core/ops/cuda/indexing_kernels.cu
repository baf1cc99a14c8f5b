// gather, scatter/scatter_add and index_select on CUDA: the indexed operand
// enters the loop with a zero stride along its indexed dim, and each
// element adds index × that dim's stride (index_select is a gather whose
// index varies along the dim only).
#include <brasa/ops/cuda/device_types.cuh>

namespace brasa::cuda::kernels {
namespace {

template <class T>
struct GatherOp {
  int64_t dim_stride;
  __device__ void operator()(char* const* p) const {
    const int64_t i = *reinterpret_cast<const int64_t*>(p[1]);
    *reinterpret_cast<T*>(p[0]) = *reinterpret_cast<const T*>(p[2] + i * dim_stride);
  }
};

template <class T>
__device__ void atomic_add(T* at, T v) {
  if constexpr (std::is_same_v<T, int64_t>)
    atomicAdd(reinterpret_cast<unsigned long long*>(at), static_cast<unsigned long long>(v));
  else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                     std::is_same_v<T, int32_t> || std::is_same_v<T, __half> ||
                     std::is_same_v<T, __nv_bfloat16>)
    atomicAdd(at, v);
  else
    *at = static_cast<T>(*at + v);  // small integer types: rejected on the host
}

template <class T>
struct ScatterOp {
  int64_t dim_stride;
  bool add;
  __device__ void operator()(char* const* p) const {
    const int64_t i = *reinterpret_cast<const int64_t*>(p[1]);
    T* at = reinterpret_cast<T*>(p[0] + i * dim_stride);
    const T v = *reinterpret_cast<const T*>(p[2]);
    if (add)
      atomic_add(at, v);
    else
      *at = v;
  }
};

// Byte offset in self of position i of an advanced-indexing result.
__device__ __forceinline__ int64_t index_offset(const IndexPlan& p, int64_t i) {
  const int64_t b = i / p.nr;
  int64_t r = i - b * p.nr, off = 0;
  for (int k = 0; k < p.n_idx; ++k) {
    int64_t v = p.idx_long[k] ? static_cast<const int64_t*>(p.idx[k])[b]
                              : static_cast<const int32_t*>(p.idx[k])[b];
    if (v < 0) v += p.idx_size[k];
    off += v * p.idx_stride[k];
  }
  for (int d = p.n_rest - 1; d >= 0; --d) {
    const int64_t q = r / p.rest_size[d];
    off += (r - q * p.rest_size[d]) * p.rest_stride[d];
    r = q;
  }
  return off;
}

template <class E>
__global__ void index_kernel(const __grid_constant__ IndexPlan p, const char* self, E* out) {
  const int64_t n = p.nb * p.nr, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = *reinterpret_cast<const E*>(self + index_offset(p, i));
}

template <class T>
__global__ void index_put_kernel(const __grid_constant__ IndexPlan p, char* self, const T* values,
                                 bool accumulate) {
  const int64_t n = p.nb * p.nr, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    T* at = reinterpret_cast<T*>(self + index_offset(p, i));
    if (!accumulate) {
      *at = values[i];
    } else if constexpr (std::is_same_v<T, bool>) {
      if (values[i]) *at = true;  // only ever sets: no race to lose
    } else {
      atomic_add(at, values[i]);
    }
  }
}

template <class T>
__global__ void class_targets_kernel(const int64_t* target, int64_t n, int64_t C,
                                     int64_t ignore_index, int64_t* safe, T* valid,
                                     DeviceErrorSlot* slot) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t t = target[i];
    const bool ignored = t == ignore_index, in_range = t >= 0 && t < C;
    if (!ignored && !in_range && atomicCAS(&slot->flag, 0, 1) == 0) {
      slot->code = kTargetOutOfBounds;
      slot->value = t;
      slot->limit = C;
    }
    const bool use = !ignored && in_range;
    safe[i] = use ? t : 0;
    valid[i] = from_acc<T>(Acc<T>(use ? 1 : 0));
  }
}

}  // namespace

void launch_index(const IndexPlan& p, const void* self, void* out, int elem_size, cudaStream_t s) {
  const int64_t n = p.nb * p.nr;
  dispatch_bits(elem_size, [&](auto tag) {
    using E = decltype(tag);
    index_kernel<E>
        <<<grid_for(n, 256), 256, 0, s>>>(p, static_cast<const char*>(self), static_cast<E*>(out));
  });
}

void launch_index_put(const IndexPlan& p, void* self, const void* values, int dtype,
                      bool accumulate, cudaStream_t s) {
  const int64_t n = p.nb * p.nr;
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    index_put_kernel<T><<<grid_for(n, 256), 256, 0, s>>>(p, static_cast<char*>(self),
                                                         static_cast<const T*>(values), accumulate);
  });
}

void launch_gather(const Loop& l, int64_t dim_stride, int dtype, cudaStream_t s) {
  dispatch(dtype, [&](auto tag) { launch<3>(l, GatherOp<decltype(tag)>{dim_stride}, s); });
}

void launch_scatter(const Loop& l, int64_t dim_stride, int dtype, bool add, cudaStream_t s) {
  dispatch(dtype, [&](auto tag) { launch<3>(l, ScatterOp<decltype(tag)>{dim_stride, add}, s); });
}

void launch_class_targets(const int64_t* target, int64_t n, int64_t C, int64_t ignore_index,
                          int64_t* safe, void* valid, int dtype, DeviceErrorSlot* slot,
                          cudaStream_t s) {
  if (n == 0) return;
  const int64_t want = (n + 255) / 256;
  const unsigned blocks = static_cast<unsigned>(want < 4096 ? want : 4096);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    class_targets_kernel<T>
        <<<blocks, 256, 0, s>>>(target, n, C, ignore_index, safe, static_cast<T*>(valid), slot);
  };
  if (dtype == kF32) run(float{});
  if (dtype == kF64) run(double{});
  if (dtype == kF16) run(__half{});
  if (dtype == kBF16) run(__nv_bfloat16{});
}

}  // namespace brasa::cuda::kernels
