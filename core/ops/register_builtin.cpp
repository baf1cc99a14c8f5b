// The kernels built into the library. A new device adds its folder under
// ops/ and one call here (guarded by its build option).
#include <brasa/device/cpu_capability.h>
#include <brasa/device/device_runtime.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/util/error.h>
#ifdef BRASA_WITH_CUDA
#include <brasa/ops/cuda/register.h>
#endif

namespace brasa::detail {

void register_builtin_kernels() {
  static const bool done = [] {
    // The vectorized families in the variant this CPU runs best (or the
    // one BRASA_CPU_CAPABILITY names), then those compiled once.
    use_cpu_capability(cpu_capability_from_env());
    cpu::register_indexing_kernels();
    cpu::register_linalg_kernels();
    cpu::register_conv_kernels();
    cpu::register_sort_kernels();
    cpu::register_pad_kernels();
    cpu::register_loss_kernels();
#ifdef BRASA_WITH_CUDA
    cuda::register_elementwise_kernels();
    cuda::register_blas_kernels();
    cuda::register_reduction_kernels();
    cuda::register_indexing_kernels();
    cuda::register_conv_pool_kernels();
    cuda::register_cudnn_conv_kernels();
    cuda::register_cudnn_batch_norm_kernels();
    cuda::register_optim_kernels();
    cuda::register_random_kernels();
    cuda::register_sort_kernels();
#endif
    return true;
  }();
  (void)done;
}

void missing_kernel(const char* op, Device d) {
  check_device_available(op, d);
  BRASA_ERROR(op, ": not implemented for device ", d, " (no ", device_type_name(d.type()),
              " kernel is registered for it)");
}

}  // namespace brasa::detail
