#include <brasa/cuda/device_error.h>
#include <brasa/cuda/cuda_check.h>

#include <cstdlib>
#include <cstring>

namespace brasa::cuda {

void throw_cuda_error(const char* op, const char* call, cudaError_t err, const char* file,
                      int line) {
  cudaGetLastError();  // clear a non-sticky error so that the next call is not blamed
  detail::throw_error("", file, line,
                      detail::str(op, ": CUDA error: ", cudaGetErrorString(err), " (",
                                  cudaGetErrorName(err), " from ", call, ")"));
}

bool query_ready(const char* op, cudaError_t err) {
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  BRASA_CUDA_CHECK(op, err);
  return true;
}

bool launch_blocking() {
  static const bool on = [] {
    const char* v = std::getenv("BRASA_CUDA_LAUNCH_BLOCKING");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

void check_launch(const char* op, cudaStream_t stream, const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess && launch_blocking()) {
    err = cudaStreamSynchronize(stream);
    if (err == cudaSuccess) raise_device_error();  // bad input the kernel found, blamed on op
  }
  if (err != cudaSuccess) {
    const char* hint = launch_blocking()
                           ? ""
                           : " (kernel errors are reported asynchronously and may come from an "
                             "earlier op; run with BRASA_CUDA_LAUNCH_BLOCKING=1 to find it)";
    detail::throw_error("", file, line,
                        detail::str(op, ": CUDA kernel launch failed: ", cudaGetErrorString(err),
                                    " (", cudaGetErrorName(err), ")", hint));
  }
}

}  // namespace brasa::cuda
