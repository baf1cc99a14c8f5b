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

}  // namespace

void launch_gather(const Loop& l, int64_t dim_stride, int dtype, cudaStream_t s) {
  dispatch(dtype, [&](auto tag) { launch<3>(l, GatherOp<decltype(tag)>{dim_stride}, s); });
}

void launch_scatter(const Loop& l, int64_t dim_stride, int dtype, bool add, cudaStream_t s) {
  dispatch(dtype, [&](auto tag) { launch<3>(l, ScatterOp<decltype(tag)>{dim_stride, add}, s); });
}

}  // namespace brasa::cuda::kernels
