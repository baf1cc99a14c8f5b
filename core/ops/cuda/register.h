#pragma once
// Registration of the CUDA kernels (CUDA builds), called once by
// detail::register_builtin_kernels (ops/register_builtin.cpp).
namespace brasa::cuda {

void register_elementwise_kernels();
void register_blas_kernels();
void register_reduction_kernels();
void register_indexing_kernels();
void register_conv_pool_kernels();
void register_cudnn_conv_kernels();
void register_cudnn_batch_norm_kernels();
void register_optim_kernels();
void register_random_kernels();
void register_sort_kernels();

}  // namespace brasa::cuda
