// The CUDA entries of gather, scatter and index_select (indexing_kernels.cu).
// Indices are checked on the host first (one small reduction and copy), so
// that a bad index is an error naming the op rather than a wild write.
#include <brasa/cuda/cuda_check.h>
#include <brasa/ops/cuda/launch_util.h>
#include <brasa/ops/cuda/register.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/indexing.h>
#include <brasa/ops/reduction.h>

namespace brasa::cuda {
namespace {

// An operand with explicit element strides (`zero_dim`'s set to 0).
void add_strided(kernels::Loop& l, const Tensor& t, IntArrayRef strides, int64_t zero_dim) {
  const int k = l.n_operands++;
  l.data[k] = static_cast<char*>(t.data_ptr());
  for (int d = 0; d < l.ndim && d < int(strides.size()); ++d)
    l.strides[k][d] = d == zero_dim ? 0 : strides[d] * t.element_size();
}

void check_range(const char* op, const Tensor& index, int64_t size, int64_t dim) {
  if (index.numel() == 0) return;
  const int64_t lo = amin(index.reshape({-1}), {0}).item<int64_t>();
  const int64_t hi = amax(index.reshape({-1}), {0}).item<int64_t>();
  BRASA_CHECK(lo >= 0 && hi < size, op, ": index ", lo < 0 ? lo : hi,
              " is out of bounds for dimension ", dim, " with size ", size);
}

void gather_cuda(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  check_range("gather", index, self.dim() == 0 ? 1 : self.size(dim), dim);
  kernels::Loop l = make_loop("gather", out.sizes());
  add_operand(l, out);
  add_strided(l, index, index.strides(), -1);
  add_strided(l, self, self.strides(), dim);
  cudaStream_t s = launch_stream(out.device());
  const int64_t dim_stride = self.dim() == 0 ? 0 : self.stride(dim) * self.element_size();
  kernels::launch_gather(l, dim_stride, static_cast<int>(out.dtype()), s);
  BRASA_CUDA_LAUNCH_CHECK("gather", s);
}

void index_select_cuda(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  kernels::Loop l = make_loop("index_select", out.sizes());
  add_operand(l, out);
  DimVector index_strides(out.dim(), 0);  // the index varies along `dim` only
  if (out.dim() > 0) index_strides[dim] = 1;
  add_strided(l, index, index_strides, -1);
  add_strided(l, self, self.strides(), dim);
  cudaStream_t s = launch_stream(out.device());
  const int64_t dim_stride = self.dim() == 0 ? 0 : self.stride(dim) * self.element_size();
  kernels::launch_gather(l, dim_stride, static_cast<int>(out.dtype()), s);
  BRASA_CUDA_LAUNCH_CHECK("index_select", s);
}

void scatter_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                  bool add) {
  const ScalarType t = self.dtype();
  BRASA_CHECK(!add || t == kFloat || t == kDouble || t == kHalf || t == kBFloat16 || t == kInt ||
                  t == kLong,
              "scatter_add_: not implemented for '", t, "' on CUDA");
  check_range(add ? "scatter_add_" : "scatter_", index, self.dim() == 0 ? 1 : self.size(dim), dim);
  kernels::Loop l = make_loop("scatter_", index.sizes());
  add_strided(l, self, self.strides(), dim);
  add_strided(l, index, index.strides(), -1);
  if (src.dim() == 0)
    add_strided(l, src, DimVector(index.dim(), 0), -1);
  else
    add_strided(l, src, src.strides(), -1);
  cudaStream_t s = launch_stream(self.device());
  const int64_t dim_stride = self.dim() == 0 ? 0 : self.stride(dim) * self.element_size();
  kernels::launch_scatter(l, dim_stride, static_cast<int>(t), add, s);
  BRASA_CUDA_LAUNCH_CHECK(add ? "scatter_add_" : "scatter_", s);
}

}  // namespace

void register_indexing_kernels() {
  register_kernel<GatherKernel>(kCUDA, gather_cuda);
  register_kernel<IndexSelectKernel>(kCUDA, index_select_cuda);
  register_kernel<ScatterKernel>(kCUDA, scatter_cuda);
}

}  // namespace brasa::cuda
