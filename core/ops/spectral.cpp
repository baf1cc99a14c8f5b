#include <brasa/autograd/grad_mode.h>
#include <brasa/nn/functional.h>
#include <brasa/nn/window_modules.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/complex.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/fft.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/spectral.h>

#include <cmath>
#include <string>

namespace brasa {

namespace {

// The window (ones by default) of win_length, centred in n_fft.
Tensor padded_window(const char* op, const std::optional<Tensor>& window, int64_t n_fft,
                     int64_t win_length, const TensorOptions& options) {
  BRASA_CHECK(win_length > 0 && win_length <= n_fft, op, ": expected 0 < win_length <= n_fft, but ",
              "got win_length=", win_length);
  Tensor w = window && window->defined() ? *window : ones({win_length}, options);
  BRASA_CHECK(w.dim() == 1 && w.size(0) == win_length, op,
              ": expected a 1D window tensor of size equal to win_length=", win_length,
              ", but got window with size ", w.sizes());
  BRASA_CHECK(w.device() == options.device(), op, ": window on ", w.device(), " for input on ",
              options.device());
  const int64_t left = (n_fft - win_length) / 2;
  return nn::functional::pad(w.to(options.dtype()), {left, n_fft - win_length - left}, 0.0);
}

struct Frames {
  int64_t n_fft, hop, win_length;
};

Frames check_frames(const char* op, int64_t n_fft, std::optional<int64_t> hop_length,
                    std::optional<int64_t> win_length) {
  Frames f{n_fft, hop_length.value_or(n_fft / 4), win_length.value_or(n_fft)};
  BRASA_CHECK(n_fft > 0, op, ": expected n_fft > 0, but got n_fft=", n_fft);
  BRASA_CHECK(f.hop > 0, op, ": expected hop_length > 0, but got hop_length=", f.hop);
  return f;
}

Tensor stft_frames(const Tensor& self, const Frames& fr, const std::optional<Tensor>& window,
                   bool normalized, std::optional<bool> onesided,
                   std::optional<bool> return_complex) {
  const char* op = "stft";
  BRASA_CHECK(self.defined() && (self.dim() == 1 || self.dim() == 2), op,
              ": expected a 1D or 2D tensor");
  BRASA_CHECK(self.is_floating_point(), op, ": expected a floating-point input, got ",
              self.scalar_type());
  BRASA_CHECK(return_complex.has_value(), op,
              ": stft requires the return_complex parameter be given for real inputs");
  const bool batched = self.dim() == 2;
  Tensor x = batched ? self : self.unsqueeze(0);
  const int64_t length = x.size(1);
  BRASA_CHECK(fr.n_fft <= length, op, ": expected 0 < n_fft < ", length,
              ", but got n_fft=", fr.n_fft);
  Tensor w = padded_window(op, window, fr.n_fft, fr.win_length, x.options());
  Tensor frames = x.unfold(1, fr.n_fft, fr.hop) * w;  // [B, n_frames, n_fft]
  // The transform of each frame, frequencies before frames.
  const std::optional<std::string_view> norm =
      normalized ? std::optional<std::string_view>("ortho") : std::nullopt;
  Tensor out = (onesided.value_or(true) ? fft::rfft(frames, std::nullopt, -1, norm)
                                        : fft::fft(frames, std::nullopt, -1, norm))
                   .transpose(1, 2);  // [B, n_freq, n_frames]
  if (!*return_complex) out = view_as_real(out.contiguous());
  if (!batched) out = out.squeeze(0);
  return out;
}

}  // namespace

Tensor stft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length,
            std::optional<int64_t> win_length, const std::optional<Tensor>& window, bool normalized,
            std::optional<bool> onesided, std::optional<bool> return_complex) {
  return stft_frames(self, check_frames("stft", n_fft, hop_length, win_length), window, normalized,
                     onesided, return_complex);
}

Tensor stft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length,
            std::optional<int64_t> win_length, const std::optional<Tensor>& window, bool center,
            const std::string& pad_mode, bool normalized, std::optional<bool> onesided,
            std::optional<bool> return_complex) {
  const Frames fr = check_frames("stft", n_fft, hop_length, win_length);
  if (!center) return stft_frames(self, fr, window, normalized, onesided, return_complex);
  BRASA_CHECK(self.defined() && (self.dim() == 1 || self.dim() == 2),
              "stft: expected a 1D or 2D tensor");
  PaddingMode mode = PaddingMode::Reflect;
  if (pad_mode == "constant")
    mode = PaddingMode::Constant;
  else if (pad_mode == "replicate")
    mode = PaddingMode::Replicate;
  else if (pad_mode == "circular")
    mode = PaddingMode::Circular;
  else
    BRASA_CHECK(pad_mode == "reflect", "stft: pad_mode must be reflect, constant, replicate or ",
                "circular, got ", pad_mode);
  // F::pad pads the last dim of [N, C, L].
  Tensor x = self.dim() == 1 ? self.view({1, 1, -1}) : self.unsqueeze(1);
  const int64_t half = n_fft / 2;
  Tensor padded = nn::functional::pad(x, nn::functional::PadFuncOptions({half, half}).mode(mode));
  padded = self.dim() == 1 ? padded.view({-1}) : padded.squeeze(1);
  return stft_frames(padded, fr, window, normalized, onesided, return_complex);
}

Tensor istft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length,
             std::optional<int64_t> win_length, const std::optional<Tensor>& window, bool center,
             bool normalized, std::optional<bool> onesided, std::optional<int64_t> length,
             bool return_complex) {
  const char* op = "istft";
  const Frames fr = check_frames(op, n_fft, hop_length, win_length);
  BRASA_CHECK(!return_complex, op,
              ": return_complex=true (a complex signal from a two-sided spectrum) is not "
              "supported; the signal is real");
  BRASA_CHECK(self.defined(), op, ": expected a defined spectrum");
  // A complex spectrum [n_freq, n_frames] is read through its real form.
  const Tensor parts = self.is_complex() ? view_as_real(self) : self;
  BRASA_CHECK((parts.dim() == 3 || parts.dim() == 4) && parts.size(-1) == 2, op,
              ": expected a complex spectrum [n_freq, n_frames] or [B, n_freq, n_frames], or "
              "one in the real form [n_freq, n_frames, 2] or [B, n_freq, n_frames, 2], got ",
              self.sizes(), " (", self.dtype(), ")");
  BRASA_CHECK(parts.is_floating_point(), op, ": expected a floating-point or complex input, got ",
              self.scalar_type());
  const bool batched = parts.dim() == 4;
  Tensor spec = batched ? parts : parts.unsqueeze(0);
  const int64_t n_freq = spec.size(1), n_frames = spec.size(2);
  const bool one_sided = onesided.value_or(n_freq != n_fft);
  if (one_sided)
    BRASA_CHECK(n_freq == n_fft / 2 + 1, op,
                ": expected the frequency dimension (3rd to the last) of the input tensor to "
                "match n_fft / 2 + 1 when onesided=True, but got ",
                n_freq);
  else
    BRASA_CHECK(n_freq == n_fft, op,
                ": expected the frequency dimension (3rd to the last) of the input tensor to "
                "match n_fft when onesided=False, but got ",
                n_freq);
  BRASA_CHECK(n_frames > 0, op, ": expected at least one frame");
  // The real inverse transform of the non-negative frequencies of each
  // frame (imaginary parts of the zero and Nyquist frequencies play no
  // part), as irfft.
  const int64_t half = n_fft / 2 + 1;
  Tensor frames =
      fft::irfft(view_as_complex(spec.narrow(1, 0, half).transpose(1, 2).contiguous()), n_fft, -1,
                 normalized ? std::optional<std::string_view>("ortho") : std::nullopt)
          .transpose(1, 2);  // [B, n_fft, n_frames]
  Tensor w = padded_window(op, window, n_fft, fr.win_length, spec.options());
  frames = frames * w.view({1, n_fft, 1});
  const int64_t expected = n_fft + fr.hop * (n_frames - 1);
  auto overlap_add = [&](const Tensor& columns) {
    return nn::functional::fold(columns, nn::functional::FoldFuncOptions({1, expected}, {1, n_fft})
                                             .stride(ExpandingArray<2>({1, fr.hop})))
        .view({columns.size(0), expected});
  };
  Tensor y = overlap_add(frames);
  Tensor envelope =
      overlap_add(w.pow(2).view({1, n_fft, 1}).expand({1, n_fft, n_frames}).contiguous());
  const int64_t start = center ? n_fft / 2 : 0;
  int64_t end = expected;
  if (length)
    end = start + *length;
  else if (center)
    end = expected - n_fft / 2;
  const int64_t stop = std::min(end, expected);
  BRASA_CHECK(stop >= start, op, ": the signal would have negative length");
  y = y.narrow(1, start, stop - start);
  envelope = envelope.narrow(1, start, stop - start);
  BRASA_CHECK(stop == start || envelope.abs().min().item<double>() > 1e-11, op,
              ": window overlap add min: ", envelope.abs().min().item<double>(),
              " (the window and hop_length do not cover the signal)");
  y = y / envelope;
  if (end > expected) y = nn::functional::pad(y, {0, end - expected}, 0.0);
  return batched ? y : y.squeeze(0);
}

}  // namespace brasa
