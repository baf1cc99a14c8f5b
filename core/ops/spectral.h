#pragma once
// The short-time Fourier transform and its inverse, as libtorch's stft and
// istft: a spectrum is complex [n_freq, n_frames] per signal with
// return_complex = true, or PyTorch's real form with return_complex = false,
// a real tensor whose last dim (of 2) holds the real and imaginary parts.
// Composed from torch::fft's rfft/fft/irfft over the frames: differentiable.
#include <brasa/tensor/tensor.h>

#include <optional>
#include <string>

namespace brasa {

// self [L] or [B, L]. center pads n_fft / 2 on both sides by pad_mode
// ("reflect", "constant", "replicate" or "circular"); onesided (the default
// for real input) keeps the n_fft / 2 + 1 non-negative frequencies;
// normalized multiplies by n_fft^-1/2. return_complex must be given.
Tensor stft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length,
            std::optional<int64_t> win_length, const std::optional<Tensor>& window, bool normalized,
            std::optional<bool> onesided = std::nullopt,
            std::optional<bool> return_complex = std::nullopt);
Tensor stft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length = std::nullopt,
            std::optional<int64_t> win_length = std::nullopt,
            const std::optional<Tensor>& window = {}, bool center = true,
            const std::string& pad_mode = "reflect", bool normalized = false,
            std::optional<bool> onesided = std::nullopt,
            std::optional<bool> return_complex = std::nullopt);
// The signal whose stft is self (complex [n_freq, n_frames], its real form
// [n_freq, n_frames, 2], or either with a batch dim first), by
// overlap-add of the inverse transforms, divided by the summed squared
// window; length trims or zero-pads the result.
Tensor istft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length = std::nullopt,
             std::optional<int64_t> win_length = std::nullopt,
             const std::optional<Tensor>& window = {}, bool center = true, bool normalized = false,
             std::optional<bool> onesided = std::nullopt,
             std::optional<int64_t> length = std::nullopt, bool return_complex = false);

}  // namespace brasa
