#pragma once
// Errors from the CUDA runtime as brasa::Error naming the op that met them.
// A kernel launch is checked right after it (BRASA_CUDA_LAUNCH_CHECK); with
// BRASA_CUDA_LAUNCH_BLOCKING=1 the launch also waits for the kernel, so that
// an error in it is reported by the op that launched it (as
// CUDA_LAUNCH_BLOCKING=1 does for PyTorch).
#include <brasa/util/error.h>

#include <cuda_runtime_api.h>

namespace brasa::cuda {

[[noreturn]] void throw_cuda_error(const char* op, const char* call, cudaError_t err,
                                   const char* file, int line);
// The answer of cudaEventQuery/cudaStreamQuery: true when done, false when
// not ready (that "error" cleared), an error naming `op` for anything else.
bool query_ready(const char* op, cudaError_t err);
// BRASA_CUDA_LAUNCH_BLOCKING=1, read once.
bool launch_blocking();
// After a launch on `stream`: the launch error, or with launch_blocking the
// kernel's own error.
void check_launch(const char* op, cudaStream_t stream, const char* file, int line);

}  // namespace brasa::cuda

#define BRASA_CUDA_CHECK(op, call)                                                \
  do {                                                                            \
    cudaError_t _brasa_err = (call);                                              \
    if (__builtin_expect(_brasa_err != cudaSuccess, 0))                           \
      ::brasa::cuda::throw_cuda_error(op, #call, _brasa_err, __FILE__, __LINE__); \
  } while (0)

#define BRASA_CUDA_LAUNCH_CHECK(op, stream) \
  ::brasa::cuda::check_launch(op, stream, __FILE__, __LINE__)
