#pragma once
// Registration of the CPU kernels, one function per op family, called once by
// detail::register_builtin_kernels (ops/register_builtin.cpp).
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/kernel_table.h>

namespace brasa::cpu {

// The vectorized families, compiled once per variant (see variant.h).
inline namespace BRASA_CPU_VARIANT {
void register_binary_kernels();
void register_unary_kernels();
void register_copy_kernels();
void register_reduction_kernels();
void register_softmax_backward_kernels();
void register_pooling_kernels();
void register_normalization_kernels();
void register_group_norm_kernels();
void register_activation_kernels();
void register_column_map_kernels();
void register_fft_kernels();
void register_depthwise_kernels();
void register_grid_sample_kernels();
void register_embedding_bag_kernels();
// All of the above (vector_kernels.cpp).
void register_vector_kernels();
}  // namespace BRASA_CPU_VARIANT

// Each variant's register_vector_kernels, for the dispatcher.
namespace base {
void register_vector_kernels();
}
namespace avx2 {
void register_vector_kernels();
}
namespace avx512 {
void register_vector_kernels();
}

// The families compiled once (their work is in libraries or memory-bound).
void register_indexing_kernels();
void register_linalg_kernels();
void register_conv_kernels();
void register_sort_kernels();
void register_pad_kernels();
void register_loss_kernels();

}  // namespace brasa::cpu
