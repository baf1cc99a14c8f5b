#pragma once
// Complex tensors (kComplexFloat, kComplexDouble): their views as real
// pairs and back, construction from parts or polar form, their parts, and
// the arithmetic (add, sub, mul, div, neg, exp, log, sqrt, reciprocal,
// square), matrix products, sum, mean and prod. Every op
// here works through view_as_real, so the real kernels do the work and the
// two views carry the only complex derivatives: the gradient of a complex
// tensor is complex, as in PyTorch. Other ops reject complex dtypes with an
// error naming the op and the dtype.
#include <brasa/tensor/tensor.h>

#include <optional>

namespace brasa {

// A real view of a complex tensor: its shape with a last dim of 2 (real,
// imaginary), sharing its storage.
Tensor view_as_real(const Tensor& self);
// A complex view of a float or double tensor whose last dim is 2 with
// stride 1 (the other strides and the offset even).
Tensor view_as_complex(const Tensor& self);
Tensor view_as_real_copy(const Tensor& self);
Tensor view_as_complex_copy(const Tensor& self);
// real + i imag, broadcast; both float or both double (or both half).
Tensor complex(const Tensor& real, const Tensor& imag);
// abs * (cos(angle) + i sin(angle)), broadcast; dtypes as for complex().
Tensor polar(const Tensor& abs, const Tensor& angle);
// The imaginary part of a complex tensor, as a view (an error for real ones).
Tensor imag(const Tensor& self);
// The argument of each element: atan2(imag, real) for complex tensors, a
// real tensor of the part type; for real ones pi where negative, 0 where
// not, NaN kept (integers give the default float dtype).
Tensor angle(const Tensor& self);

namespace detail {
// a + alpha * b, a - alpha * b, a * b and -a where a or b is complex (the
// other converted): called by add, sub, mul and neg.
Tensor complex_add(const Tensor& a, const Tensor& b, double alpha);
Tensor complex_mul(const Tensor& a, const Tensor& b);
// a / b (true division) where a or b is complex; a real divisor divides
// both parts exactly. Called by div.
Tensor complex_div(const Tensor& a, const Tensor& b);
// a == b where a or b is complex: both parts equal (called by eq and ne).
Tensor complex_eq(const Tensor& a, const Tensor& b);
// exp, log, sqrt (principal branch), reciprocal and square of a complex
// tensor, on its parts; an undefined tensor for the other unary ops (sign
// gets PyTorch's error pointing to sgn). Called by the unary ops.
Tensor complex_unary(const char* op, const Tensor& x);
// a @ b where a or b is complex, by `product` (mm, bmm or matmul) over the
// real and imaginary parts: (A + iB)(C + iD) = AC - BD + i(AD + BC).
Tensor complex_matmul(const Tensor& a, const Tensor& b,
                      Tensor (*product)(const Tensor&, const Tensor&));
// The product over `dim` of a complex tensor, by pairwise complex products
// (log2 of the dim's size rounds), so that its gradient comes from complex
// multiplication and stays exact where elements are zero.
Tensor complex_prod(const Tensor& x, int64_t dim, bool keepdim, std::optional<ScalarType> dtype);
// self += alpha * other for a complex self.
Tensor& complex_add_(Tensor& self, const Tensor& other, double alpha);
// sum (or mean) of a complex tensor over `dim` (all dims when empty), in
// the dtype given (a complex one) or its own.
Tensor complex_sum(const char* op, const Tensor& x, IntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype, bool mean);
// |z| of each element: a real tensor of the part type.
Tensor complex_abs(const Tensor& self);
// The complex conjugate (a new tensor).
Tensor complex_conj(const Tensor& self);
// Copies src into dst where either is complex (a real source fills the
// real parts and zeros the imaginary ones; a complex source into a real
// destination gives its real parts, as in PyTorch).
void complex_copy(const Tensor& dst, const Tensor& src, bool non_blocking);
}  // namespace detail

}  // namespace brasa
