#pragma once
// cuBLAS for Brasa's ops: one handle per thread and device, bound to the
// current stream at each use; errors as brasa::Error naming the op.
#include <cublas_v2.h>

namespace brasa::cuda {

// The calling thread's handle for the current device, set to its current stream.
cublasHandle_t blas_handle();
[[noreturn]] void throw_cublas_error(const char* op, const char* call, cublasStatus_t status);

// torch.backends.cuda.matmul.allow_tf32: float32 matmuls may use TF32 tensor
// cores (off by default, as in PyTorch).
bool matmul_allow_tf32();
void set_matmul_allow_tf32(bool allow);

}  // namespace brasa::cuda

#define BRASA_CUBLAS_CHECK(op, call)                               \
  do {                                                             \
    cublasStatus_t _brasa_status = (call);                         \
    if (_brasa_status != CUBLAS_STATUS_SUCCESS)                    \
      ::brasa::cuda::throw_cublas_error(op, #call, _brasa_status); \
  } while (0)
