#pragma once
// nn::init: in-place initializers (run without recording history), with
// libtorch's signatures: kaiming_normal_(w, 0, torch::kFanOut, torch::kReLU).
#include <brasa/tensor/tensor.h>

#include <tuple>

namespace brasa {

// The nonlinearities calculate_gain knows that have no other torch:: name
// (kTanh and kReLU are the RNN's, kLinear interpolate's).
enum class Nonlinearity {
  Linear,
  Conv1D,
  Conv2D,
  Conv3D,
  ConvTranspose1D,
  ConvTranspose2D,
  ConvTranspose3D,
  Sigmoid,
  Tanh,
  ReLU,
  LeakyReLU
};
inline constexpr Nonlinearity kConv1D = Nonlinearity::Conv1D;
inline constexpr Nonlinearity kConv2D = Nonlinearity::Conv2D;
inline constexpr Nonlinearity kConv3D = Nonlinearity::Conv3D;
inline constexpr Nonlinearity kConvTranspose1D = Nonlinearity::ConvTranspose1D;
inline constexpr Nonlinearity kConvTranspose2D = Nonlinearity::ConvTranspose2D;
inline constexpr Nonlinearity kConvTranspose3D = Nonlinearity::ConvTranspose3D;
inline constexpr Nonlinearity kSigmoid = Nonlinearity::Sigmoid;
inline constexpr Nonlinearity kLeakyReLU = Nonlinearity::LeakyReLU;

// Which fan kaiming_* scales by: torch::kFanIn (the forward pass's
// variance) or torch::kFanOut (the backward pass's).
enum class FanMode { In, Out };
inline constexpr FanMode kFanIn = FanMode::In;
inline constexpr FanMode kFanOut = FanMode::Out;

enum class ActivationKind;   // nn/sequence_modules.h: kTanh, kReLU
enum class InterpolateMode;  // nn/functional.h: kLinear

namespace nn::init {

// libtorch's NonlinearityType: any of the torch:: names above.
class NonlinearityType {
 public:
  NonlinearityType(Nonlinearity n) : kind_(n) {}  // NOLINT: implicit, as libtorch's variant
  NonlinearityType(ActivationKind a);             // NOLINT
  NonlinearityType(InterpolateMode m);            // NOLINT
  Nonlinearity kind() const { return kind_; }

 private:
  Nonlinearity kind_;
};
using FanModeType = FanMode;

// The recommended gain for a nonlinearity: 1 for linear, the convolutions
// and sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + param^2)) for
// leaky_relu with negative slope param.
double calculate_gain(NonlinearityType nonlinearity, double param = 0.01);

Tensor uniform_(Tensor t, double a = 0, double b = 1);
Tensor normal_(Tensor t, double mean = 0, double std = 1);
Tensor constant_(Tensor t, const Scalar& value);
Tensor ones_(Tensor t);
Tensor zeros_(Tensor t);
// fan_in / fan_out of a weight [out, in, k...].
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);
std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& t);  // libtorch's name
Tensor xavier_uniform_(Tensor t, double gain = 1.0);
Tensor xavier_normal_(Tensor t, double gain = 1.0);
// std = calculate_gain(nonlinearity, a) / sqrt(fan), a the leaky ReLU's
// negative slope (PyTorch's default layer init uses a = sqrt(5)).
Tensor kaiming_uniform_(Tensor t, double a = 0, FanModeType mode = kFanIn,
                        NonlinearityType nonlinearity = kLeakyReLU);
Tensor kaiming_normal_(Tensor t, double a = 0, FanModeType mode = kFanIn,
                       NonlinearityType nonlinearity = kLeakyReLU);
// The identity of a convolution: weight [out, in, k...] (3 to 5 dims) zero
// but for 1 at the centre tap of channel pairs (i, i).
Tensor dirac_(Tensor t);
// The identity matrix (2-D, rectangular allowed).
Tensor eye_(Tensor t);
// A 2-D tensor from N(0, std) with a fraction `sparsity` of each column zero.
Tensor sparse_(Tensor t, double sparsity, double std = 0.01);

// PyTorch's default for Linear and the convolutions (plain and transposed):
// kaiming_uniform_(a = sqrt(5)) on the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in))
// on the bias when it is defined (fan_in of the weight as laid out: for a
// transposed convolution's [in, out / groups, k...] that is size(1) * k...).
void default_layer_init_(Tensor weight, Tensor bias);

// A (semi-)orthogonal matrix (rows or columns orthonormal) times gain, from
// the QR decomposition of a Gaussian matrix; tensors of > 2 dims are viewed
// as [size(0), rest].
Tensor orthogonal_(Tensor t, double gain = 1.0);

}  // namespace nn::init
}  // namespace brasa
