// stft / istft in the real [..., 2] form (ops/spectral.h) against PyTorch's
// outputs; their error paths. Gradients are in the gradcheck table.
#include <brasa/torch.h>

#include "../test_util.h"
#include "golden_util.h"

namespace {

using namespace brasa;
using golden::expect_golden;
using golden::S;

Tensor hann(int64_t n) { return torch::hann_window(n, TensorOptions().dtype(kDouble)); }

TEST(Spectral, StftMatchesPyTorch) {
  expect_golden("stft_hann_center", torch::stft(S({2, 40}, 0.9, 0.2), 16, 5, 12, hann(12), true,
                                                "reflect", false, std::nullopt, false));
  expect_golden("stft_plain_twosided", torch::stft(S({30}, 0.7, 0.2), 8, std::nullopt, std::nullopt,
                                                   {}, true, false, false));
  expect_golden("stft_constant_pad", torch::stft(S({30}, 0.7, 0.2), 9, 4, std::nullopt, {}, true,
                                                 "constant", false, std::nullopt, false));
}

TEST(Spectral, IstftInvertsStftAndMatchesPyTorch) {
  Tensor x = S({2, 40}, 0.9, 0.2);
  Tensor spec =
      torch::stft(x, 16, 4, std::nullopt, hann(16), true, "reflect", false, std::nullopt, false);
  Tensor back = torch::istft(spec, 16, 4, std::nullopt, hann(16));
  expect_golden("istft_roundtrip", back);
  EXPECT_TRUE(torch::allclose(back, x.narrow(1, 0, back.size(1)), 1e-10, 1e-10));
  expect_golden("istft_length_normalized",
                torch::istft(S({9, 7, 2}, 0.45, 0.3), 16, 4, std::nullopt, hann(16), true, true,
                             std::nullopt, 35));
  expect_golden("istft_odd_nocenter",
                torch::istft(S({5, 6, 2}, 0.45, 0.3), 9, 3, std::nullopt, hann(9) + 0.1, false));
}

// return_complex=true gives the complex spectrum whose real form the
// goldens hold; istft reads either form.
TEST(Spectral, ComplexSpectraAsPyTorchReturnsThem) {
  Tensor x = S({2, 40}, 0.9, 0.2);
  Tensor spec =
      torch::stft(x, 16, 4, std::nullopt, hann(16), true, "reflect", false, std::nullopt, true);
  ASSERT_EQ(spec.dtype(), kComplexDouble);
  EXPECT_EQ(spec.sizes(), IntArrayRef({2, 9, 11}));
  Tensor real_form =
      torch::stft(x, 16, 4, std::nullopt, hann(16), true, "reflect", false, std::nullopt, false);
  EXPECT_TRUE(torch::view_as_real(spec).equal(real_form));
  expect_golden("istft_roundtrip", torch::istft(spec, 16, 4, std::nullopt, hann(16)));
  expect_golden("istft_length_normalized",
                torch::istft(torch::view_as_complex(S({9, 7, 2}, 0.45, 0.3)), 16, 4, std::nullopt,
                             hann(16), true, true, std::nullopt, 35));
  // Gradients reach the signal through the complex spectrum.
  Tensor xs = S({30}, 0.7, 0.2).requires_grad_();
  Tensor c = torch::stft(xs, 8, std::nullopt, std::nullopt, {}, true, "reflect", false,
                         std::nullopt, true);
  torch::view_as_real(c).pow(2).sum().backward();
  Tensor xr = S({30}, 0.7, 0.2).requires_grad_();
  torch::stft(xr, 8, std::nullopt, std::nullopt, {}, true, "reflect", false, std::nullopt, false)
      .pow(2)
      .sum()
      .backward();
  EXPECT_TRUE(torch::allclose(xs.grad(), xr.grad(), 1e-12, 1e-12));
}

TEST(Spectral, BadInputGetsClearErrors) {
  EXPECT_ERROR("stft requires the return_complex parameter be given for real inputs",
               torch::stft(S({30}), 8));
  EXPECT_ERROR("expected a 1D window tensor of size equal to win_length=8",
               torch::stft(S({30}), 8, std::nullopt, std::nullopt, hann(6), true, "reflect", false,
                           std::nullopt, false));
  EXPECT_ERROR("pad_mode must be reflect, constant, replicate or circular, got edge",
               torch::stft(S({30}), 8, std::nullopt, std::nullopt, {}, true, "edge", false,
                           std::nullopt, false));
  EXPECT_ERROR("match n_fft / 2 + 1 when onesided=True, but got 6",
               torch::istft(S({6, 4, 2}), 16, 4, std::nullopt, {}, true, false, true));
  EXPECT_ERROR("window overlap add min",
               torch::istft(S({9, 4, 2}), 16, 4, std::nullopt, hann(16), false));
}

}  // namespace

namespace {

using namespace brasa;

TEST(Spectral, MoreBadInputGetsClearErrors) {
  auto stft = [](const Tensor& x, int64_t n_fft, std::optional<int64_t> hop,
                 std::optional<int64_t> win) {
    return torch::stft(x, n_fft, hop, win, {}, false, false, false);
  };
  EXPECT_ERROR("stft: expected n_fft > 0, but got n_fft=0", stft(golden::S({30}), 0, 1, 1));
  EXPECT_ERROR("stft: expected hop_length > 0, but got hop_length=0",
               stft(golden::S({30}), 8, 0, std::nullopt));
  EXPECT_ERROR("stft: expected 0 < win_length <= n_fft, but got win_length=9",
               stft(golden::S({30}), 8, std::nullopt, 9));
  EXPECT_ERROR("stft: expected 0 < n_fft < 30, but got n_fft=40",
               stft(golden::S({30}), 40, std::nullopt, std::nullopt));
  EXPECT_ERROR("stft: expected a floating-point input, got Long",
               stft(golden::L({1, 2, 3, 4}), 2, 1, std::nullopt));
  EXPECT_ERROR("istft: expected a complex spectrum [n_freq, n_frames]",
               torch::istft(golden::S({9, 4}), 16));
  EXPECT_ERROR("match n_fft when onesided=False, but got 9",
               torch::istft(golden::S({9, 4, 2}), 16, 4, std::nullopt, {}, true, false, false));
  EXPECT_ERROR(
      "istft: return_complex=true (a complex signal from a two-sided spectrum) is not "
      "supported",
      torch::istft(golden::S({9, 4, 2}), 16, 4, std::nullopt, {}, true, false, std::nullopt,
                   std::nullopt, true));
}

}  // namespace
