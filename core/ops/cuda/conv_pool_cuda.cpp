// The CUDA entries of im2col/col2im and max pooling (conv_pool_kernels.cu):
// conv2d itself goes through cuDNN (conv_cudnn.cpp); conv_transpose2d runs
// as im2col + cuBLAS GEMM + col2im, as on the CPU (ops/conv.cpp).
#include <brasa/cuda/cuda_check.h>
#include <brasa/ops/cuda/launch_util.h>
#include <brasa/ops/cuda/register.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/conv.h>
#include <brasa/ops/kernels/pooling.h>

namespace brasa::cuda {
namespace {

kernels::Windows windows_of(const detail::ConvGeometry& g) {
  return {g.N, g.C, g.H, g.W, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, g.OH, g.OW};
}

void im2col_cuda(const Tensor& x, const Tensor& cols, const detail::ConvGeometry& g) {
  cudaStream_t s = launch_stream(x.device());
  kernels::launch_im2col(x.data_ptr(), cols.data_ptr(), windows_of(g), static_cast<int>(x.dtype()),
                         s);
  BRASA_CUDA_LAUNCH_CHECK("conv2d (im2col)", s);
}

void col2im_cuda(const Tensor& cols, const Tensor& x, const detail::ConvGeometry& g) {
  cudaStream_t s = launch_stream(x.device());
  kernels::launch_col2im(cols.data_ptr(), x.data_ptr(), windows_of(g), static_cast<int>(x.dtype()),
                         s);
  BRASA_CUDA_LAUNCH_CHECK("conv2d backward (col2im)", s);
}

void max_pool2d_cuda(const Tensor& x, const Tensor& out, const Tensor& idx, const PoolGeometry& g) {
  const ScalarType t = x.dtype();
  BRASA_CHECK(t == kFloat || t == kDouble || t == kHalf || t == kBFloat16,
              "max_pool2d: not implemented for '", t, "' on CUDA");
  const kernels::Windows w{1,    g.planes, g.H,  g.W,  g.kh, g.kw, g.sh,
                           g.sw, g.ph,     g.pw, g.dh, g.dw, g.OH, g.OW};
  cudaStream_t s = launch_stream(x.device());
  kernels::launch_max_pool2d(x.data_ptr(), out.data_ptr(),
                             idx.defined() ? idx.data_ptr<int64_t>() : nullptr, w,
                             static_cast<int>(t), s);
  BRASA_CUDA_LAUNCH_CHECK("max_pool2d", s);
}

}  // namespace

void register_conv_pool_kernels() {
  register_kernel<Im2ColKernel>(kCUDA, im2col_cuda);
  register_kernel<Col2ImKernel>(kCUDA, col2im_cuda);
  register_kernel<MaxPool2dKernel>(kCUDA, max_pool2d_cuda);
}

}  // namespace brasa::cuda
