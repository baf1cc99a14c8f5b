#pragma once
// Matrix products through oneDNN or OpenBLAS (float32, float64); other dtypes by loops.
#include <brasa/tensor/tensor.h>

#include <string>

namespace brasa {

// The library that runs float32 matrix products on the CPU (mm, matmul,
// linear layers, bmm, im2col convolutions, gradients into .grad): oneDNN's
// sgemm, which brings its own kernels for the running processor, or
// OpenBLAS. kAuto (the default) takes oneDNN on AVX-512 processors, where
// Debian's OpenBLAS runs AVX2 kernels, and OpenBLAS otherwise (measured
// faster there on whole training steps). BRASA_GEMM=openblas or onednn in
// the environment sets the choice (read at the first product; any other
// value is an error then); float64 always runs on OpenBLAS.
enum class GemmBackend { kAuto, kOpenBLAS, kOneDNN };
void set_gemm_backend(GemmBackend backend);
// The backend float32 products run on now (never kAuto).
GemmBackend gemm_backend();

Tensor mm(const Tensor& a, const Tensor& b);
Tensor& mm_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
// All of libtorch's matmul cases: dot, mv, mm, batched with broadcast batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& m, const Tensor& v);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor vdot(const Tensor& a, const Tensor& b);
Tensor outer(const Tensor& a, const Tensor& b);
Tensor ger(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
Tensor addmv(const Tensor& self, const Tensor& m, const Tensor& v, const Scalar& beta = 1,
             const Scalar& alpha = 1);
Tensor addbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
              const Scalar& alpha = 1);
Tensor baddbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
               const Scalar& alpha = 1);
// beta * self + alpha * outer(vec1, vec2)
Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1,
            const Scalar& alpha = 1);
// "ij,jk->ik", "bij,bjk->bik", "ii->i", "...ij,...jk", implicit output, any operand count.
Tensor einsum(const std::string& equation, TensorList operands);
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b);

namespace detail {
// self.addmm_(m1, m2): without autograd, a contiguous self that shares no
// storage with m1/m2 is the GEMM's output (beta scales it in place).
Tensor& addmm_inplace(Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta,
                      const Scalar& alpha);
// self.addmv_ / addr_ / addbmm_ / baddbmm_: the out-of-place result, which
// must have self's shape, written into self.
Tensor& addmv_inplace(Tensor& self, const Tensor& m, const Tensor& v, const Scalar& beta,
                      const Scalar& alpha);
Tensor& addr_inplace(Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta,
                     const Scalar& alpha);
Tensor& addbmm_inplace(Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta,
                       const Scalar& alpha);
Tensor& baddbmm_inplace(Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta,
                        const Scalar& alpha);
}  // namespace detail

}  // namespace brasa
