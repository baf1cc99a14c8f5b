#pragma once
// Op codes of matrix products (ops/linalg.cpp), shared with the devices'
// kernels (ops/cpu/linalg_kernels.cpp: OpenBLAS).
#include <brasa/tensor/tensor.h>

namespace brasa {

// c = alpha * a @ b + beta * c for 2-D a [M, K], b [K, N] of any strides and
// c [M, N] contiguous, all of one dtype; beta = 0 never reads c.
struct GemmKernel {
  static constexpr const char* name = "mm";
  using Fn = void (*)(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha,
                      const Scalar& beta);
};
// c[i] = a[i] @ b[i] for 3-D a, b and c [B, M, N] contiguous.
struct BmmKernel {
  static constexpr const char* name = "bmm";
  using Fn = void (*)(const Tensor& a, const Tensor& b, const Tensor& c);
};

}  // namespace brasa
