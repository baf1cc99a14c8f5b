// torch::fft (ops/fft.h): every transform against a direct O(n^2) DFT in
// double over many lengths (each radix, mixed radices, Bluestein's primes),
// for float and double, rows in vector blocks and alone; the API's
// semantics (n, s, dim, norm, Hermitian forms, frequencies, shifts) against
// PyTorch's outputs; the error paths. Gradients are in the gradcheck table
// and checked against PyTorch's here.
#include <brasa/torch.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "../test_util.h"
#include "golden_util.h"

namespace {

using namespace brasa;
using golden::expect_golden;
using golden::S;
using golden::Z;
using cd = std::complex<double>;

// The rows of a complex [rows, n] tensor as complex doubles.
std::vector<std::vector<cd>> rows_of(const Tensor& z) {
  Tensor parts = view_as_real(z.to(kComplexDouble).contiguous()).contiguous();
  const int64_t rows = z.size(0), n = z.size(1);
  const double* p = parts.data_ptr<double>();
  std::vector<std::vector<cd>> out(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < n; ++k)
      out[static_cast<size_t>(r)].emplace_back(p[2 * (r * n + k)], p[2 * (r * n + k) + 1]);
  return out;
}

// sum_j x_j exp(-+2 pi i j k / n), the angle reduced exactly.
std::vector<cd> dft(const std::vector<cd>& x, bool inverse) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<cd> y(x.size());
  for (int64_t k = 0; k < n; ++k) {
    cd acc = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double angle = 2 * std::numbers::pi * static_cast<double>((j * k) % n) / n;
      acc += x[static_cast<size_t>(j)] * std::polar(1.0, inverse ? angle : -angle);
    }
    y[static_cast<size_t>(k)] = acc;
  }
  return y;
}

// got (complex [rows, m]) equals want within tol * sqrt(n) * the largest |x|.
void expect_rows_near(const Tensor& got, const std::vector<std::vector<cd>>& want, double tol,
                      const std::string& what) {
  auto g = rows_of(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  double largest = 1;
  for (const auto& row : want)
    for (cd v : row) largest = std::max(largest, std::abs(v));
  for (size_t r = 0; r < want.size(); ++r) {
    ASSERT_EQ(g[r].size(), want[r].size()) << what;
    for (size_t k = 0; k < want[r].size(); ++k)
      ASSERT_LT(std::abs(g[r][k] - want[r][k]), tol * largest)
          << what << " row " << r << " bin " << k << ": " << g[r][k] << " vs " << want[r][k];
  }
}

Tensor signal(int64_t rows, int64_t n, ScalarType dtype, double a = 0.731) {
  return view_as_complex(S({rows, n, 2}, a, 0.3)).to(dtype);
}

const std::vector<int64_t> kLengths = {1,  2,  3,   4,   5,   6,   7,   8,   9,   11,   12,
                                       13, 15, 16,  17,  25,  27,  31,  32,  37,  49,   60,
                                       64, 97, 100, 121, 128, 210, 243, 256, 331, 1000, 1024};

TEST(Fft, ComplexTransformsMatchTheDirectSumAtEveryLength) {
  for (ScalarType dtype : {kComplexFloat, kComplexDouble}) {
    const double tol = dtype == kComplexFloat ? 2e-6 : 1e-13;
    for (int64_t n : kLengths)
      for (int64_t rows : {1, 3, 19}) {  // 19: a block of vector lanes and leftovers
        Tensor x = signal(rows, n, dtype);
        auto in = rows_of(x);
        std::vector<std::vector<cd>> fwd, inv;
        for (const auto& row : in) {
          fwd.push_back(dft(row, false));
          inv.push_back(dft(row, true));
          for (cd& v : inv.back()) v /= static_cast<double>(n);
        }
        const std::string what = std::string(toString(dtype)) + " n=" + std::to_string(n) +
                                 " rows=" + std::to_string(rows);
        expect_rows_near(torch::fft::fft(x), fwd, tol * std::sqrt(n) * 8, "fft " + what);
        expect_rows_near(torch::fft::ifft(x), inv, tol * 8, "ifft " + what);
      }
  }
}

TEST(Fft, RealTransformsMatchTheDirectSumAtEveryLength) {
  for (ScalarType dtype : {kFloat, kDouble}) {
    const double tol = dtype == kFloat ? 2e-6 : 1e-13;
    for (int64_t n : kLengths)
      for (int64_t rows : {1, 19}) {
        Tensor x = S({rows, n}, 0.917, 0.2).to(dtype);
        const std::string what = std::string(toString(dtype)) + " n=" + std::to_string(n) +
                                 " rows=" + std::to_string(rows);
        // rfft: the first n / 2 + 1 bins of the complex transform.
        auto in = rows_of(complex(x.to(kDouble), zeros_like(x.to(kDouble))));
        std::vector<std::vector<cd>> half;
        for (const auto& row : in) {
          auto full = dft(row, false);
          half.emplace_back(full.begin(), full.begin() + n / 2 + 1);
        }
        Tensor spectrum = torch::fft::rfft(x);
        EXPECT_EQ(spectrum.scalar_type(), toComplexType(dtype));
        expect_rows_near(spectrum, half, tol * std::sqrt(n) * 8, "rfft " + what);
        // irfft inverts it, and reads only the non-negative half.
        Tensor back = torch::fft::irfft(spectrum, n);
        EXPECT_EQ(back.scalar_type(), dtype);
        EXPECT_TRUE(allclose(back.to(kDouble), x.to(kDouble), 0, tol * 64)) << "irfft " << what;
        // irfft as the real part of the inverse of the Hermitian spectrum,
        // whatever the imaginary parts of the bins that must be real hold.
        Tensor noisy = spectrum.clone();
        {
          Tensor parts = view_as_real(noisy);
          parts.select(-1, 1).select(-1, 0).fill_(0.75);
          if (n % 2 == 0) parts.select(-1, 1).select(-1, n / 2).fill_(-0.5);
        }
        EXPECT_TRUE(allclose(torch::fft::irfft(noisy, n), back, 0, tol * 64))
            << "irfft ignores the imaginary parts of bins 0 and n/2, " << what;
      }
  }
}

TEST(Fft, TransformsAlongInnerDimsMatchTheLastDim) {
  // A middle dim with 37 columns after it: blocks of vector lanes side by
  // side in memory, and leftover columns one by one.
  for (ScalarType dtype : {kFloat, kDouble})
    for (int64_t n : {12, 15, 64, 37}) {
      const double tol = dtype == kFloat ? 1e-4 : 1e-11;
      Tensor r = S({3, n, 37}, 0.417, 0.2).to(dtype);
      Tensor z = complex(r, S({3, n, 37}, 0.29, 0.7).to(dtype));
      auto same = [&](const Tensor& a, const Tensor& b) {
        Tensor x = a.is_complex() ? view_as_real(a.contiguous()) : a;
        Tensor y = b.is_complex() ? view_as_real(b.contiguous()) : b;
        return allclose(x, y, tol, tol);
      };
      const std::string what = std::string(toString(dtype)) + " n=" + std::to_string(n);
      EXPECT_TRUE(same(torch::fft::fft(z, std::nullopt, 1),
                       torch::fft::fft(z.transpose(1, 2).contiguous()).transpose(1, 2)))
          << what;
      EXPECT_TRUE(same(torch::fft::ifft(z, std::nullopt, 1, "ortho"),
                       torch::fft::ifft(z.transpose(1, 2).contiguous(), std::nullopt, -1, "ortho")
                           .transpose(1, 2)))
          << what;
      Tensor spectrum = torch::fft::rfft(r, std::nullopt, 1);
      EXPECT_TRUE(same(spectrum, torch::fft::rfft(r.transpose(1, 2).contiguous()).transpose(1, 2)))
          << what;
      EXPECT_TRUE(same(torch::fft::irfft(spectrum, n, 1), r)) << what;
    }
}

TEST(Fft, LongTransformsRunRowByRowAndInvert) {
  // Rows too long for a block of lanes, and a prime (Bluestein) length.
  for (int64_t n : {int64_t{1} << 16, int64_t{65537}, int64_t{3} * 5 * 7 * 11 * 13 * 3}) {
    Tensor x = signal(2, n, kComplexDouble, 0.0137);
    Tensor y = torch::fft::fft(x);
    EXPECT_TRUE(allclose(view_as_real(torch::fft::ifft(y)), view_as_real(x), 0, 1e-11)) << n;
    // Parseval: sum |y|^2 = n sum |x|^2.
    EXPECT_NEAR(y.abs().pow(2).sum().item<double>(), n * x.abs().pow(2).sum().item<double>(),
                1e-9 * n * x.abs().pow(2).sum().item<double>())
        << n;
    // One bin against the direct sum.
    auto row = rows_of(x.narrow(0, 1, 1))[0];
    const int64_t k = 12345 % n;
    cd want = 0;
    for (int64_t j = 0; j < n; ++j)
      want += row[static_cast<size_t>(j)] *
              std::polar(1.0, -2 * std::numbers::pi * static_cast<double>((j * k) % n) / n);
    auto got = rows_of(y.narrow(0, 1, 1))[0][static_cast<size_t>(k)];
    EXPECT_LT(std::abs(got - want), 1e-9 * std::abs(want) + 1e-8) << n;
    Tensor r = S({3, n}, 0.011, 0.4).to(kFloat);
    EXPECT_TRUE(allclose(torch::fft::irfft(torch::fft::rfft(r), n), r, 0, 2e-5)) << n;
  }
}

TEST(Fft, SemanticsMatchPyTorch) {
  const double tol = 1e-12;
  expect_golden("fft_n_pad_dim0", view_as_real(torch::fft::fft(Z({5, 3}), 7, 0)), tol);
  expect_golden("fft_real_input_trim_ortho",
                view_as_real(torch::fft::fft(S({2, 9}, 0.8, 0.1), 6, -1, "ortho")), tol);
  expect_golden("ifft_forward_norm",
                view_as_real(torch::fft::ifft(Z({2, 10}), std::nullopt, -1, "forward")), tol);
  expect_golden("rfft_odd_dim0",
                view_as_real(torch::fft::rfft(S({9, 2}, 0.6, 0.3), std::nullopt, 0)), tol);
  expect_golden("rfft_even_pad", view_as_real(torch::fft::rfft(S({3, 10}, 0.6, 0.3), 12)), tol);
  expect_golden("irfft_default_n", torch::fft::irfft(Z({2, 6}, 0.5, 0.2)), tol);
  expect_golden("irfft_odd_n_ortho", torch::fft::irfft(Z({2, 6}, 0.5, 0.2), 9, -1, "ortho"), tol);
  expect_golden("irfft_n_longer", torch::fft::irfft(Z({4}, 0.5, 0.2), 12), tol);
  expect_golden("hfft_default", torch::fft::hfft(Z({2, 5}, 0.3, 0.7)), tol);
  expect_golden("hfft_odd_forward", torch::fft::hfft(Z({2, 5}, 0.3, 0.7), 7, -1, "forward"), tol);
  expect_golden("ihfft_odd", view_as_real(torch::fft::ihfft(S({2, 7}, 0.45, 0.2))), tol);
  expect_golden("fft2_s", view_as_real(torch::fft::fft2(Z({2, 4, 5}), {3, 6})), tol);
  expect_golden("ifft2_dims",
                view_as_real(torch::fft::ifft2(Z({3, 4, 5}), std::nullopt, {0, 2}, "ortho")), tol);
  expect_golden("fftn_all", view_as_real(torch::fft::fftn(Z({3, 4, 5}))), tol);
  expect_golden("fftn_s_only", view_as_real(torch::fft::fftn(Z({3, 4, 5}), {5, -1})), tol);
  expect_golden("ifftn_dim", view_as_real(torch::fft::ifftn(Z({3, 4, 5}), std::nullopt, {1})), tol);
  expect_golden("rfftn_all", view_as_real(torch::fft::rfftn(S({3, 4, 5}, 0.6, 0.3))), tol);
  expect_golden("rfft2_s", view_as_real(torch::fft::rfft2(S({2, 4, 6}, 0.6, 0.3), {5, 7})), tol);
  expect_golden("irfftn_all", torch::fft::irfftn(Z({3, 4, 5}, 0.5, 0.2)), tol);
  expect_golden("irfft2_s", torch::fft::irfft2(Z({2, 4, 5}, 0.5, 0.2), {3, 7}, {-2, -1}, "forward"),
                tol);
  expect_golden("hfft2_default", torch::fft::hfft2(Z({2, 3, 4}, 0.3, 0.7)), tol);
  expect_golden("ihfft2_default", view_as_real(torch::fft::ihfft2(S({2, 3, 5}, 0.45, 0.2))), tol);
  expect_golden("hfftn_s", torch::fft::hfftn(Z({3, 4}, 0.3, 0.7), {3, 5}, {0, 1}, "ortho"), tol);
  expect_golden("ihfftn_dims",
                view_as_real(torch::fft::ihfftn(S({3, 4, 6}, 0.45, 0.2), std::nullopt, {0, 2})),
                tol);
  expect_golden("fft_prime_bluestein", view_as_real(torch::fft::fft(Z({2, 37}, 0.21, 0.4))), tol);
  expect_golden("fft_mixed_radix_7_11", view_as_real(torch::fft::fft(Z({1, 77}, 0.21, 0.4))), tol);
  expect_golden("fftfreq_even", torch::fft::fftfreq(8, 0.5, TensorOptions().dtype(kDouble)));
  expect_golden("fftfreq_odd", torch::fft::fftfreq(7, TensorOptions().dtype(kDouble)));
  expect_golden("rfftfreq_odd", torch::fft::rfftfreq(9, 2.0, TensorOptions().dtype(kDouble)));
  expect_golden("fftshift_all", torch::fft::fftshift(S({3, 5})));
  expect_golden("ifftshift_dim", torch::fft::ifftshift(S({3, 5}), {1}));
  EXPECT_EQ(torch::fft::fftfreq(4).scalar_type(), get_default_dtype());
  // Integers are promoted to the default float type.
  Tensor ints = arange(6, TensorOptions().dtype(kLong));
  EXPECT_EQ(torch::fft::rfft(ints).scalar_type(), kComplexFloat);
  EXPECT_TRUE(allclose(view_as_real(torch::fft::rfft(ints)),
                       view_as_real(torch::fft::rfft(ints.to(kFloat)))));
}

TEST(Fft, GradientsMatchPyTorch) {
  Tensor z = Z({3, 6}).clone().requires_grad_();
  Tensor x = S({3, 7}, 0.6, 0.3).clone().requires_grad_();
  Tensor h = Z({3, 5}, 0.4, 0.2).clone().requires_grad_();
  Tensor loss = (torch::fft::fft(z, 8, -1, "ortho").abs().pow(2) * S({8}, 0.3, 0.1)).sum();
  loss = loss + (real(torch::fft::rfft(x)) * S({4}, 0.5, 0.2)).sum() +
         imag(torch::fft::rfft(x)).pow(2).sum();
  loss = loss + (torch::fft::irfft(h, 9) * S({9}, 0.7, 0.3)).sum() +
         torch::fft::hfft(h).pow(2).sum() * 0.01;
  loss = loss + real(torch::fft::ifft2(z, {4, 5})).pow(2).sum();
  loss.backward();
  expect_golden(
      "fft_grads",
      cat({view_as_real(z.grad()).flatten(), x.grad().flatten(), view_as_real(h.grad()).flatten()}),
      1e-11);
}

// libtorch's spellings: braced sizes and dims, c10::nullopt, a std::string
// norm, a vector of dims, an at::OptionalIntArrayRef variable.
TEST(Fft, LibtorchSpellings) {
  Tensor x = S({4, 8, 8});
  const std::string mode = "ortho";
  EXPECT_EQ(torch::fft::fftn(x, {8, 6}).sizes().vec(), (std::vector<int64_t>{4, 8, 6}));
  EXPECT_EQ(torch::fft::fft2(x, c10::nullopt, {0, 1}, mode).sizes().vec(),
            (std::vector<int64_t>{4, 8, 8}));
  EXPECT_EQ(torch::fft::rfftn(x, c10::nullopt, std::vector<int64_t>{1, 2}).sizes().vec(),
            (std::vector<int64_t>{4, 8, 5}));
  at::OptionalIntArrayRef none = c10::nullopt;
  EXPECT_EQ(torch::fft::ifftn(x, none).sizes().vec(), (std::vector<int64_t>{4, 8, 8}));
  EXPECT_EQ(torch::fft::fftshift(x, {1}).sizes().vec(), (std::vector<int64_t>{4, 8, 8}));
  EXPECT_EQ(torch::fft::fftfreq(8, 0.1, torch::kDouble).scalar_type(), kDouble);
}

TEST(Fft, BadInputGetsClearErrors) {
  Tensor x = S({4, 6});
  EXPECT_ERROR("Invalid normalization mode", torch::fft::fft(x, 8, -1, "sideways"));
  EXPECT_ERROR("Invalid number of data points (0)", torch::fft::fft(x, 0));
  EXPECT_ERROR("irfft: Invalid number of data points (0)", torch::fft::irfft(Z({1})));
  EXPECT_ERROR("rfft expects a real input tensor", torch::fft::rfft(Z({4})));
  EXPECT_ERROR("ihfft expects a real input tensor", torch::fft::ihfft(Z({4})));
  EXPECT_ERROR("half-precision transforms", torch::fft::fft(x.to(kHalf)));
  EXPECT_ERROR("dimension out of range", torch::fft::fft(x, std::nullopt, 2));
  EXPECT_ERROR("FFT dims must be unique", torch::fft::fftn(x, std::nullopt, {0, 0}));
  EXPECT_ERROR("dim and shape arguments must have the same length",
               torch::fft::fftn(x, {4}, {0, 1}));
  EXPECT_ERROR("Got shape with 3 values but input tensor only has 2 dimensions",
               torch::fft::fftn(x, {2, 2, 2}));
  EXPECT_ERROR("must transform at least one axis",
               torch::fft::rfftn(x, std::nullopt, std::vector<int64_t>{}));
  EXPECT_ERROR("Invalid number of data points (0)", torch::fft::fftfreq(0));
  EXPECT_ERROR("expected a defined tensor", torch::fft::fft(Tensor()));
}

}  // namespace
