// The CUDA entries of the reduction kernel tables (reduction_kernels.cu).
#include <brasa/cuda/cuda_check.h>
#include <brasa/ops/cuda/launch_util.h>
#include <brasa/ops/cuda/register.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernels/reduction.h>

namespace brasa::cuda {
namespace {

kernels::Rows rows_of(const Tensor& t, int64_t K, int64_t R, bool outer) {
  kernels::Rows r;
  r.in = t.data_ptr();
  r.K = K;
  r.R = R;
  r.outer = outer;
  r.dtype = static_cast<int>(t.dtype());
  return r;
}

void reduce_rows_cuda(const RowPlan& p, const Tensor& out, RowReduction op,
                      const ReduceOptions& o) {
  cudaStream_t s = launch_stream(out.device());
  const kernels::Rows rows = rows_of(p.rows, p.K, p.R, p.outer);
  const int64_t P = kernels::split_count(rows, static_cast<int>(op));
  Tensor scratch;
  if (P > 1) scratch = empty({p.K * P * 3}, TensorOptions().dtype(kDouble).device(out.device()));
  kernels::launch_reduce_rows(rows, out.data_ptr(), static_cast<int>(out.dtype()),
                              static_cast<int>(op), o.p, o.unbiased, P,
                              scratch.defined() ? scratch.data_ptr() : nullptr, s);
  BRASA_CUDA_LAUNCH_CHECK("reduction", s);
}

void arg_extreme_cuda(const RowPlan& p, const Tensor& values, const Tensor& indices, bool is_max) {
  cudaStream_t s = launch_stream(values.device());
  kernels::launch_arg_extreme(rows_of(p.rows, p.K, p.R, p.outer), values.data_ptr(),
                              indices.data_ptr<int64_t>(), is_max, s);
  BRASA_CUDA_LAUNCH_CHECK(is_max ? "max" : "min", s);
}

void map_rows_cuda(const Tensor& in, const Tensor& out, int64_t K, int64_t R, RowMap op) {
  cudaStream_t s = launch_stream(out.device());
  kernels::launch_map_rows(rows_of(in, K, R, false), out.data_ptr(), static_cast<int>(op), s);
  BRASA_CUDA_LAUNCH_CHECK("softmax/cumsum", s);
}

}  // namespace

void register_reduction_kernels() {
  register_kernel<ReduceRowsKernel>(kCUDA, reduce_rows_cuda);
  register_kernel<ArgExtremeKernel>(kCUDA, arg_extreme_cuda);
  register_kernel<MapRowsKernel>(kCUDA, map_rows_cuda);
}

}  // namespace brasa::cuda
