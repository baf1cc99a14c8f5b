#pragma once
// Unary elementwise ops. Float-valued math on integer tensors returns the
// default float dtype, as in PyTorch.
#include <brasa/ops/kernels/elementwise.h>
#include <brasa/tensor/tensor.h>

namespace brasa {

#define BRASA_DECLARE_UNARY(name) \
  Tensor name(const Tensor& x);   \
  Tensor& name##_out(Tensor& out, const Tensor& x);
BRASA_DECLARE_UNARY(neg)
BRASA_DECLARE_UNARY(abs)
BRASA_DECLARE_UNARY(sign)
BRASA_DECLARE_UNARY(exp)
BRASA_DECLARE_UNARY(exp2)
BRASA_DECLARE_UNARY(expm1)
BRASA_DECLARE_UNARY(log)
BRASA_DECLARE_UNARY(log2)
BRASA_DECLARE_UNARY(log10)
BRASA_DECLARE_UNARY(log1p)
BRASA_DECLARE_UNARY(sqrt)
BRASA_DECLARE_UNARY(rsqrt)
BRASA_DECLARE_UNARY(reciprocal)
BRASA_DECLARE_UNARY(sin)
BRASA_DECLARE_UNARY(cos)
BRASA_DECLARE_UNARY(tan)
BRASA_DECLARE_UNARY(asin)
BRASA_DECLARE_UNARY(acos)
BRASA_DECLARE_UNARY(atan)
BRASA_DECLARE_UNARY(sinh)
BRASA_DECLARE_UNARY(cosh)
BRASA_DECLARE_UNARY(tanh)
BRASA_DECLARE_UNARY(sigmoid)
BRASA_DECLARE_UNARY(relu)
BRASA_DECLARE_UNARY(erf)
BRASA_DECLARE_UNARY(erfinv)
BRASA_DECLARE_UNARY(floor)
BRASA_DECLARE_UNARY(ceil)
BRASA_DECLARE_UNARY(round)
BRASA_DECLARE_UNARY(trunc)
BRASA_DECLARE_UNARY(frac)
BRASA_DECLARE_UNARY(square)
BRASA_DECLARE_UNARY(logical_not)
BRASA_DECLARE_UNARY(bitwise_not)
BRASA_DECLARE_UNARY(isnan)
BRASA_DECLARE_UNARY(isinf)
BRASA_DECLARE_UNARY(isfinite)
#undef BRASA_DECLARE_UNARY
Tensor negative(const Tensor& x);
Tensor absolute(const Tensor& x);
Tensor nan_to_num(const Tensor& x, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);

namespace detail {
Tensor& unary_inplace(UnaryOp op, Tensor& x);
// Gradient of relu given its output y: g where y > 0, else 0 (one pass).
Tensor threshold_backward(const Tensor& g, const Tensor& y);
}  // namespace detail

}  // namespace brasa
