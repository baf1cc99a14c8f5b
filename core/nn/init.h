#pragma once
// nn::init: in-place initializers (run without recording history).
#include <brasa/tensor/tensor.h>

namespace brasa::nn::init {

Tensor uniform_(Tensor t, double a = 0, double b = 1);
Tensor normal_(Tensor t, double mean = 0, double std = 1);
Tensor constant_(Tensor t, double value);
Tensor ones_(Tensor t);
Tensor zeros_(Tensor t);
// fan_in / fan_out of a weight [out, in, k...].
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);
Tensor xavier_uniform_(Tensor t, double gain = 1.0);
Tensor xavier_normal_(Tensor t, double gain = 1.0);
// nonlinearity "leaky_relu" with slope a (PyTorch's default layer init uses a = sqrt(5)) or "relu".
Tensor kaiming_uniform_(Tensor t, double a = 0, bool fan_in_mode = true,
                        const std::string& nonlinearity = "leaky_relu");
Tensor kaiming_normal_(Tensor t, double a = 0, bool fan_in_mode = true,
                       const std::string& nonlinearity = "leaky_relu");

// PyTorch's default for Linear and the convolutions (plain and transposed):
// kaiming_uniform_(a = sqrt(5)) on the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in))
// on the bias when it is defined (fan_in of the weight as laid out: for a
// transposed convolution's [in, out / groups, k...] that is size(1) * k...).
void default_layer_init_(Tensor weight, Tensor bias);

// A (semi-)orthogonal matrix (rows or columns orthonormal) times gain, from
// the QR decomposition of a Gaussian matrix; tensors of > 2 dims are viewed
// as [size(0), rest].
Tensor orthogonal_(Tensor t, double gain = 1.0);

}  // namespace brasa::nn::init
