// One variant's vectorized kernels, registered together (see variant.h).
#include <brasa/ops/cpu/register.h>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {

void register_vector_kernels() {
  register_binary_kernels();
  register_unary_kernels();
  register_copy_kernels();
  register_reduction_kernels();
  register_softmax_backward_kernels();
  register_pooling_kernels();
  register_normalization_kernels();
  register_group_norm_kernels();
  register_activation_kernels();
  register_column_map_kernels();
  register_fft_kernels();
  register_depthwise_kernels();
  register_grid_sample_kernels();
  register_embedding_bag_kernels();
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
