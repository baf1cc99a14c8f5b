#pragma once
// Discrete Fourier transforms, libtorch's torch::fft namespace: fft/ifft of
// complex (or real) signals, rfft/irfft between real signals and their
// one-sided spectra, hfft/ihfft for Hermitian signals, their 2-d and n-d
// forms, the sample frequencies and the shifts. n (or s) trims or zero-pads
// each transformed dim first; norm is "backward" (the default: the inverse
// divides by n), "forward" (the forward one does) or "ortho" (both by
// sqrt(n)). Float, double and complex inputs (integers are promoted to the
// default float type); any length (mixed radix, Bluestein's algorithm for
// large prime factors). All differentiable, gradients of complex tensors as
// in PyTorch.
#include <brasa/tensor/tensor.h>
#include <brasa/util/optional_array_ref.h>

#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

namespace brasa {

namespace fft {

using Norm = std::optional<std::string_view>;

Tensor fft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
           Norm norm = std::nullopt);
Tensor ifft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            Norm norm = std::nullopt);
// The n / 2 + 1 non-negative frequencies of a real signal.
Tensor rfft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            Norm norm = std::nullopt);
// The real signal of n samples (default 2 * (size - 1)) whose rfft is self.
Tensor irfft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
             Norm norm = std::nullopt);
// The (real) transform of a Hermitian signal given by its first half, and
// the inverse: ihfft of a real signal gives that half.
Tensor hfft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            Norm norm = std::nullopt);
Tensor ihfft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
             Norm norm = std::nullopt);

Tensor fft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
            Norm norm = std::nullopt);
Tensor ifft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
             Norm norm = std::nullopt);
Tensor rfft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
             Norm norm = std::nullopt);
Tensor irfft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
              Norm norm = std::nullopt);
Tensor hfft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
             Norm norm = std::nullopt);
Tensor ihfft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
              Norm norm = std::nullopt);

// Over `dim` (default: the last s.size() dims when s is given, else all);
// s[i] = -1 keeps that dim's size.
Tensor fftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt,
            OptionalIntArrayRef dim = std::nullopt, Norm norm = std::nullopt);
Tensor ifftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt,
             OptionalIntArrayRef dim = std::nullopt, Norm norm = std::nullopt);
// The last of `dim` is the one-sided (half) one.
Tensor rfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt,
             OptionalIntArrayRef dim = std::nullopt, Norm norm = std::nullopt);
Tensor irfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt,
              OptionalIntArrayRef dim = std::nullopt, Norm norm = std::nullopt);
// libtorch 1.13 declares these two with dims {-2, -1} by default.
Tensor hfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
             Norm norm = std::nullopt);
Tensor ihfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
              Norm norm = std::nullopt);

// The sample frequencies of a transform of length n with spacing d:
// [0, 1, ..., (n - 1) / 2, -(n / 2), ..., -1] / (d n), and the n / 2 + 1
// non-negative ones (default dtype unless options say otherwise).
Tensor fftfreq(int64_t n, double d, const TensorOptions& options = {});
Tensor fftfreq(int64_t n, const TensorOptions& options = {});
Tensor rfftfreq(int64_t n, double d, const TensorOptions& options = {});
Tensor rfftfreq(int64_t n, const TensorOptions& options = {});

// The zero frequency moved to the middle of each dim in `dim` (all by
// default), and back.
Tensor fftshift(const Tensor& x, OptionalIntArrayRef dim = std::nullopt);
Tensor ifftshift(const Tensor& x, OptionalIntArrayRef dim = std::nullopt);

}  // namespace fft
}  // namespace brasa
