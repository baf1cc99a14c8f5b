#pragma once
// Binary and ternary elementwise ops with broadcasting and type promotion.
// Each has free, _out and (on Tensor) method / in-place forms.
#include <brasa/ops/kernels/elementwise.h>
#include <brasa/tensor/tensor.h>

namespace brasa {

#define BRASA_DECLARE_BINARY(name)               \
  Tensor name(const Tensor& a, const Tensor& b); \
  Tensor name(const Tensor& a, const Scalar& b); \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b);

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor rsub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor rsub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
BRASA_DECLARE_BINARY(mul)
// rounding_mode: none (true division), "trunc" or "floor".
Tensor div(const Tensor& a, const Tensor& b,
           std::optional<std::string> rounding_mode = std::nullopt);
Tensor div(const Tensor& a, const Scalar& b,
           std::optional<std::string> rounding_mode = std::nullopt);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b,
                std::optional<std::string> rounding_mode = std::nullopt);
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor true_divide(const Tensor& a, const Tensor& b);
BRASA_DECLARE_BINARY(pow)
Tensor pow(const Scalar& base, const Tensor& e);
BRASA_DECLARE_BINARY(atan2)
BRASA_DECLARE_BINARY(fmod)
BRASA_DECLARE_BINARY(remainder)
BRASA_DECLARE_BINARY(minimum)
BRASA_DECLARE_BINARY(maximum)
BRASA_DECLARE_BINARY(eq)
BRASA_DECLARE_BINARY(ne)
BRASA_DECLARE_BINARY(lt)
BRASA_DECLARE_BINARY(le)
BRASA_DECLARE_BINARY(gt)
BRASA_DECLARE_BINARY(ge)
BRASA_DECLARE_BINARY(logical_and)
BRASA_DECLARE_BINARY(logical_or)
BRASA_DECLARE_BINARY(logical_xor)
BRASA_DECLARE_BINARY(bitwise_and)
BRASA_DECLARE_BINARY(bitwise_or)
BRASA_DECLARE_BINARY(bitwise_xor)
#undef BRASA_DECLARE_BINARY

Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other);
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other);
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
Tensor clamp(const Tensor& self, std::optional<Scalar> min,
             std::optional<Scalar> max = std::nullopt);
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min,
             const std::optional<Tensor>& max);
Tensor clamp_min(const Tensor& self, const Scalar& min);
Tensor clamp_max(const Tensor& self, const Scalar& max);
Tensor clip(const Tensor& self, std::optional<Scalar> min,
            std::optional<Scalar> max = std::nullopt);
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);
bool equal(const Tensor& a, const Tensor& b);

namespace detail {
// In-place forms used by the Tensor methods: self is the output.
Tensor& add_inplace(Tensor& self, const Tensor& b, const Scalar& alpha);
Tensor& arith_inplace(BinaryOp op, Tensor& self, const Tensor& b);
Tensor& compare_inplace(CompareOp op, Tensor& self, const Tensor& b);
Tensor& bitwise_inplace(BitwiseOp op, Tensor& self, const Tensor& b);
Tensor& div_inplace(Tensor& self, const Tensor& b, std::optional<std::string> mode);
Tensor& lerp_inplace(Tensor& self, const Tensor& end, const Tensor& w);
Tensor& addcmul_inplace(Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& v,
                        bool div);
Tensor& masked_fill_inplace(Tensor& self, const Tensor& mask, const Tensor& value);
Tensor& clamp_inplace(Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max);
// clamp's gradient (strict: hardtanh's, zero at the bounds themselves).
Tensor clamp_backward(const Tensor& g, const Tensor& x, std::optional<Scalar> lo,
                      std::optional<Scalar> hi, bool strict);
// clamp whose gradient is zero at the bounds, as PyTorch's hardtanh (and relu6).
Tensor hardtanh(const Tensor& self, double lo, double hi);
}  // namespace detail

}  // namespace brasa
