// The CUDA entries of the indexing family: gather, scatter, index_select and
// advanced indexing (indexing_kernels.cu); masked_select and nonzero
// (sort_select_kernels.cu), which learn their result's size with one sync,
// as in PyTorch.
// Indices are checked on the host first (one small reduction and copy), so
// that a bad index is an error naming the op rather than a wild write.
#include <brasa/cuda/cuda_check.h>
#include <brasa/cuda/device_error.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/cuda/launch_util.h>
#include <brasa/ops/cuda/register.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/indexing.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>

namespace brasa::cuda {
namespace {

// An operand with explicit element strides (`zero_dim`'s set to 0).
void add_strided(kernels::Loop& l, const Tensor& t, IntArrayRef strides, int64_t zero_dim) {
  const int k = l.n_operands++;
  l.data[k] = static_cast<char*>(t.data_ptr());
  for (int d = 0; d < l.ndim && d < int(strides.size()); ++d)
    l.strides[k][d] = d == zero_dim ? 0 : strides[d] * t.element_size();
}

// The smallest and largest index, read back together: one sync, not two.
std::pair<int64_t, int64_t> index_bounds(const Tensor& index) {
  const Tensor flat = index.reshape({-1});
  const Tensor both = stack({amin(flat, {0}), amax(flat, {0})}).to(Device(kCPU), kLong);
  return {both.data_ptr<int64_t>()[0], both.data_ptr<int64_t>()[1]};
}

// Every index in [0, size), or in [-size, size) where negative ones count
// from the end (`wraps`, advanced indexing).
void check_range(const char* op, const Tensor& index, int64_t size, int64_t dim,
                 bool wraps = false) {
  if (index.numel() == 0 || IndicesInRangeGuard::active()) return;
  const auto [lo, hi] = index_bounds(index);
  const int64_t first = wraps ? -size : 0;
  BRASA_CHECK(lo >= first && hi < size, op, ": index ", lo < first ? lo : hi,
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

kernels::IndexPlan index_plan(const char* op, const Tensor& self, const AdvancedIndex& p) {
  BRASA_CHECK(p.dims.size() <= size_t(kernels::kMaxDims), op, ": at most ", kernels::kMaxDims,
              " indexed dims on CUDA");
  kernels::IndexPlan k;
  k.n_idx = static_cast<int>(p.dims.size());
  k.n_rest = static_cast<int>(p.rest.size());
  k.nb = compute_numel(p.bshape);
  k.nr = 1;
  for (int i = 0; i < k.n_idx; ++i) {
    const int64_t d = p.dims[i];
    check_range(op, p.indices[i], self.size(d), d, /*wraps=*/true);
    k.idx[i] = p.indices[i].data_ptr();
    k.idx_long[i] = p.indices[i].dtype() == kLong;
    k.idx_size[i] = self.size(d);
    k.idx_stride[i] = self.stride(d) * self.element_size();
  }
  for (int i = 0; i < k.n_rest; ++i) {
    k.rest_size[i] = self.size(p.rest[i]);
    k.rest_stride[i] = self.stride(p.rest[i]) * self.element_size();
    k.nr *= k.rest_size[i];
  }
  return k;
}

void index_cuda(const Tensor& self, const AdvancedIndex& p, const Tensor& out) {
  const kernels::IndexPlan k = index_plan("index", self, p);
  cudaStream_t s = launch_stream(out.device());
  kernels::launch_index(k, self.data_ptr(), out.data_ptr(), static_cast<int>(self.element_size()),
                        s);
  BRASA_CUDA_LAUNCH_CHECK("index", s);
}

// Without accumulate a repeated index keeps one of its values (which one is
// not defined, as in PyTorch on CUDA); with it, floating sums are atomic, so
// their rounding order may differ from run to run.
void index_put_cuda(const Tensor& self, const AdvancedIndex& p, const Tensor& values,
                    bool accumulate) {
  const ScalarType t = self.dtype();
  BRASA_CHECK(!accumulate || !(t == kByte || t == kChar || t == kShort),
              "index_put_: accumulate is not implemented for '", t, "' on CUDA");
  const kernels::IndexPlan k = index_plan("index_put_", self, p);
  cudaStream_t s = launch_stream(self.device());
  kernels::launch_index_put(k, self.data_ptr(), values.data_ptr(), static_cast<int>(t), accumulate,
                            s);
  BRASA_CUDA_LAUNCH_CHECK("index_put_", s);
}

// How many of `flags` (contiguous bool) are set: the one sync that sizes the result.
int64_t count_set(const Tensor& flags) {
  const int64_t n = flags.numel();
  if (n == 0) return 0;
  const size_t bytes = kernels::count_scratch_bytes(n), at = (bytes + 7) / 8 * 8;
  Tensor scratch = empty({static_cast<int64_t>(at) + 8}, flags.options().dtype(kByte));
  auto* count = reinterpret_cast<int64_t*>(static_cast<char*>(scratch.data_ptr()) + at);
  cudaStream_t s = launch_stream(flags.device());
  kernels::launch_count_flags(flags.data_ptr<bool>(), n, count, scratch.data_ptr(), bytes, s);
  BRASA_CUDA_LAUNCH_CHECK("nonzero/masked_select", s);
  int64_t host = 0;
  BRASA_CUDA_CHECK("nonzero/masked_select",
                   cudaMemcpyAsync(&host, count, sizeof(host), cudaMemcpyDeviceToHost, s));
  BRASA_CUDA_CHECK("nonzero/masked_select", cudaStreamSynchronize(s));
  raise_device_error();
  return host;
}

Tensor masked_select_cuda(const Tensor& self, const Tensor& mask) {
  const int64_t n = mask.numel(), count = count_set(mask);
  Tensor out = empty({count}, self.options());
  if (count == 0) return out;
  const int es = static_cast<int>(self.element_size());
  const size_t bytes = kernels::compact_scratch_bytes(n, count, es);
  Tensor scratch = empty({static_cast<int64_t>(bytes)}, self.options().dtype(kByte));
  cudaStream_t s = launch_stream(self.device());
  kernels::launch_masked_select(self.data_ptr(), mask.data_ptr<bool>(), out.data_ptr(), n, es,
                                scratch.data_ptr(), bytes, s);
  BRASA_CUDA_LAUNCH_CHECK("masked_select", s);
  return out;
}

Tensor nonzero_cuda(const Tensor& self) {
  BRASA_CHECK(self.dim() <= kernels::kMaxDims, "nonzero: at most ", kernels::kMaxDims,
              " dims on CUDA, got ", self.sizes());
  Tensor flags = self.dtype() == kBool ? contiguous(self) : contiguous(self.ne(0));
  const int64_t n = flags.numel(), count = count_set(flags);
  Tensor out = empty({count, self.dim()}, self.options().dtype(kLong));
  if (count == 0 || self.dim() == 0) return out;
  const size_t bytes = kernels::compact_scratch_bytes(n, count, 8);
  Tensor scratch = empty({static_cast<int64_t>(bytes)}, self.options().dtype(kByte));
  cudaStream_t s = launch_stream(self.device());
  kernels::launch_nonzero(flags.data_ptr<bool>(), count, out.data_ptr<int64_t>(), n,
                          self.sizes().data(), static_cast<int>(self.dim()), scratch.data_ptr(),
                          bytes, s);
  BRASA_CUDA_LAUNCH_CHECK("nonzero", s);
  return out;
}

void class_targets_cuda(const Tensor& target, int64_t C, int64_t ignore_index, const Tensor& safe,
                        const Tensor& valid) {
  cudaStream_t s = launch_stream(valid.device());
  kernels::launch_class_targets(target.data_ptr<int64_t>(), target.numel(), C, ignore_index,
                                safe.data_ptr<int64_t>(), valid.data_ptr(),
                                static_cast<int>(valid.dtype()), device_error_slot(), s);
  BRASA_CUDA_LAUNCH_CHECK("nll_loss", s);
}

}  // namespace

void register_indexing_kernels() {
  register_kernel<AdvancedIndexKernel>(kCUDA, index_cuda);
  register_kernel<AdvancedIndexPutKernel>(kCUDA, index_put_cuda);
  register_kernel<MaskedSelectKernel>(kCUDA, masked_select_cuda);
  register_kernel<NonzeroKernel>(kCUDA, nonzero_cuda);
  register_kernel<GatherKernel>(kCUDA, gather_cuda);
  register_kernel<IndexSelectKernel>(kCUDA, index_select_cuda);
  register_kernel<ScatterKernel>(kCUDA, scatter_cuda);
  register_kernel<ClassTargetKernel>(kCUDA, class_targets_cuda);
}

}  // namespace brasa::cuda
