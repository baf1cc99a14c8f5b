#pragma once
// libtorch's top-level queries about a tensor's type and values
// (torch::is_floating_point, torch::promote_types, torch::result_type, ...)
// and complex parts and conjugates, which a tensor of a real dtype passes
// through unchanged (conj, real, resolve_neg).
#include <brasa/tensor/tensor.h>

namespace brasa {

bool is_floating_point(const Tensor& self);
bool is_complex(const Tensor& self);
bool is_signed(const Tensor& self);   // false for uint8 and bool
bool is_nonzero(const Tensor& self);  // the single value != 0; errors unless numel == 1
bool is_same_size(const Tensor& self, const Tensor& other);
bool is_conj(const Tensor& self);         // false: conj() makes a new tensor
bool is_neg(const Tensor& self);          // false: no negative views
bool is_inference(const Tensor& self);    // false: no inference tensors
bool is_distributed(const Tensor& self);  // false, as in libtorch
// Whether a value of type `from` may be cast to `to` by a type-promoting
// in-place op (no float to integer, no number to bool).
bool can_cast(ScalarType from, ScalarType to);
ScalarType promote_types(ScalarType a, ScalarType b);
// The dtype an arithmetic op on the two gives (0-dim tensors and scalars
// take part only by category, as in PyTorch).
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);

Tensor isreal(const Tensor& self);  // imag == 0; all true for real dtypes
Tensor real(const Tensor& self);    // a view of the real parts; self for real dtypes
Tensor conj(const Tensor& self);    // a new tensor for complex dtypes; self for real
Tensor conj_physical(const Tensor& self);
Tensor resolve_conj(const Tensor& self);
Tensor resolve_neg(const Tensor& self);
Tensor sgn(const Tensor& self);  // sign for real dtypes
Tensor detach(const Tensor& self);
// The conjugate transpose of the last two dims.
Tensor adjoint(const Tensor& self);
// A new tensor like self, filled with value (a number or a 0-dim tensor).
Tensor fill(const Tensor& self, const Scalar& value);
Tensor fill(const Tensor& self, const Tensor& value);

}  // namespace brasa
