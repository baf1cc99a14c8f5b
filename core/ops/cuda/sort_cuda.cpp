// The CUDA entry of row sorting (sort_select_kernels.cu): CUB's radix and
// segmented sorts over unsigned keys (sort_keys.h), their scratch from the
// caching allocator.
#include <brasa/cuda/cuda_check.h>
#include <brasa/ops/cuda/launch_util.h>
#include <brasa/ops/cuda/register.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/sort.h>

namespace brasa::cuda {
namespace {

// `stable` needs nothing more: a radix sort keeps equal keys in input order.
void sort_rows_cuda(const Tensor& rows, const Tensor& vals, const Tensor& idx, bool descending,
                    bool /*stable*/) {
  const int64_t K = rows.size(0), R = rows.size(1), k = vals.size(1);
  const int dtype = static_cast<int>(rows.dtype());
  const size_t bytes = kernels::sort_scratch_bytes(K, R, dtype);
  Tensor scratch = empty({static_cast<int64_t>(bytes)}, rows.options().dtype(kByte));
  cudaStream_t s = launch_stream(rows.device());
  kernels::launch_sort_rows(rows.data_ptr(), vals.data_ptr(), idx.data_ptr<int64_t>(), K, R, k,
                            descending, dtype, scratch.data_ptr(), bytes, s);
  BRASA_CUDA_LAUNCH_CHECK("sort", s);
}

}  // namespace

void register_sort_kernels() { register_kernel<SortRowsKernel>(kCUDA, sort_rows_cuda); }

}  // namespace brasa::cuda
