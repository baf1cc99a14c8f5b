#pragma once
#include <brasa/tensor/tensor.h>

namespace brasa {

// dst <- src, broadcasting src, converting dtype, any strides on either side.
// non_blocking: a copy between pinned host memory and a device does not
// wait for the device (as in PyTorch; synchronise before reading the host side).
Tensor& copy_(Tensor& dst, const Tensor& src, bool non_blocking = false);
Tensor clone(const Tensor& t);
Tensor contiguous(const Tensor& t);

namespace detail {
// The kernels without argument checks or version bumps, for freshly made tensors.
void copy_kernel(const Tensor& dst, const Tensor& src, bool non_blocking = false);
void fill_kernel(const Tensor& dst, const Scalar& v);
}  // namespace detail

}  // namespace brasa
