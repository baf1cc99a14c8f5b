// Matrix products on CUDA through cuBLAS (GemmKernel, BmmKernel): row-major
// tensors are handed to the column-major library as their transposes,
// C^T = B^T A^T, so no copy is made for row- or column-contiguous operands.
#include <brasa/cuda/blas_handle.h>
#include <brasa/cuda/cublas_library.h>
#include <brasa/cuda/cuda_check.h>
#include <brasa/cuda/stream.h>
#include <brasa/ops/cuda/register.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/linalg.h>

#include <array>
#include <atomic>
#include <mutex>

namespace brasa::cuda {

namespace {
std::atomic<bool> g_allow_tf32{false};
}  // namespace

bool matmul_allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }
void set_matmul_allow_tf32(bool allow) { g_allow_tf32.store(allow); }

void throw_cublas_error(const char* op, const char* call, cublasStatus_t status) {
  BRASA_ERROR(op, ": cuBLAS error: ", cublas_library().status_string(status), " (", call, ")");
}

cublasHandle_t blas_handle() {
  struct Handles {
    std::array<cublasHandle_t, 64> h{};
    ~Handles() {
      for (cublasHandle_t x : h)
        if (x) cublas_library().destroy(x);
    }
  };
  thread_local Handles handles;
  const DeviceIndex d = current_device();
  cublasHandle_t& h = handles.h[d];
  if (!h) BRASA_CUBLAS_CHECK("cuBLAS", cublas_library().create(&h));
  BRASA_CUBLAS_CHECK("cuBLAS", cublas_library().set_stream(h, getCurrentCUDAStream(d).stream()));
  return h;
}

namespace {

// How cuBLAS reads a row-major matrix X [rows, cols]: X^T as stored (op N)
// when its rows are contiguous, X itself transposed (op T) when its columns
// are; otherwise X is copied to contiguous.
struct BlasOperand {
  Tensor t;
  cublasOperation_t op;
  int64_t ld;
};

BlasOperand blas_operand(const Tensor& x) {
  const int64_t rows = x.size(0), cols = x.size(1);
  if (x.stride(1) == 1 && x.stride(0) >= std::max<int64_t>(cols, 1))
    return {x, CUBLAS_OP_N, std::max<int64_t>(x.stride(0), 1)};
  if (x.stride(0) == 1 && x.stride(1) >= std::max<int64_t>(rows, 1))
    return {x, CUBLAS_OP_T, std::max<int64_t>(x.stride(1), 1)};
  Tensor c = x.contiguous();
  return {c, CUBLAS_OP_N, std::max<int64_t>(cols, 1)};
}

cudaDataType_t blas_type(const char* op, ScalarType t) {
  switch (t) {
    case kFloat:
      return CUDA_R_32F;
    case kDouble:
      return CUDA_R_64F;
    case kHalf:
      return CUDA_R_16F;
    case kBFloat16:
      return CUDA_R_16BF;
    default:
      BRASA_ERROR(op, ": not implemented for '", t,
                  "' on CUDA (float, double, half and bfloat16 are)");
  }
}

cublasComputeType_t compute_type(ScalarType t) {
  if (t == kDouble) return CUBLAS_COMPUTE_64F;
  if (t == kFloat && !matmul_allow_tf32()) return CUBLAS_COMPUTE_32F;
  return t == kFloat ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

void gemm_cuda(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha,
               const Scalar& beta) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  if (M == 0 || N == 0) return;
  const ScalarType t = c.dtype();
  const cudaDataType_t type = blas_type("mm", t);
  if (K == 0) {  // an empty sum: c = beta * c
    Tensor out = c;
    if (beta.toDouble() == 0)
      out.zero_();
    else
      out.mul_(beta);
    return;
  }
  CUDAGuard guard(c.device());
  BlasOperand bo = blas_operand(b), ao = blas_operand(a);
  const double ad = alpha.toDouble(), bd = beta.toDouble();
  const float af = static_cast<float>(ad), bf = static_cast<float>(bd);
  const void* alpha_p = t == kDouble ? static_cast<const void*>(&ad) : &af;
  const void* beta_p = t == kDouble ? static_cast<const void*>(&bd) : &bf;
  BRASA_CUBLAS_CHECK(
      "mm", cublas_library().gemm_ex(blas_handle(), bo.op, ao.op, int(N), int(M), int(K), alpha_p,
                                     bo.t.data_ptr(), type, int(bo.ld), ao.t.data_ptr(), type,
                                     int(ao.ld), beta_p, c.data_ptr(), type, int(N),
                                     compute_type(t), CUBLAS_GEMM_DEFAULT));
}

void bmm_cuda(const Tensor& a, const Tensor& b, const Tensor& c) {
  const int64_t B = a.size(0), M = a.size(1), K = a.size(2), N = b.size(2);
  if (B == 0 || M == 0 || N == 0) return;
  const ScalarType t = c.dtype();
  const cudaDataType_t type = blas_type("bmm", t);
  if (K == 0) {
    Tensor(c).zero_();
    return;
  }
  CUDAGuard guard(c.device());
  Tensor ac = a.contiguous(), bc = b.contiguous();
  const double one_d = 1, zero_d = 0;
  const float one_f = 1, zero_f = 0;
  const void* one = t == kDouble ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = t == kDouble ? static_cast<const void*>(&zero_d) : &zero_f;
  BRASA_CUBLAS_CHECK(
      "bmm", cublas_library().gemm_strided_batched_ex(
                 blas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, int(N), int(M), int(K), one,
                 bc.data_ptr(), type, int(N), K * N, ac.data_ptr(), type, int(K), M * K, zero,
                 c.data_ptr(), type, int(N), M * N, int(B), compute_type(t), CUBLAS_GEMM_DEFAULT));
}

}  // namespace

void register_blas_kernels() {
  register_kernel<GemmKernel>(kCUDA, gemm_cuda);
  register_kernel<BmmKernel>(kCUDA, bmm_cuda);
}

}  // namespace brasa::cuda
