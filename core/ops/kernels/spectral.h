#pragma once
// The discrete Fourier transform kernel (ops/fft.cpp's torch::fft ops) and
// the plans it runs: a transform of length n factored into radix-2/3/4/5 and
// small-prime passes, or, when n has a prime factor above kFftLargestRadix,
// Bluestein's chirp-z transform over a power-of-two length. Plans are built
// once per length (ops/fft_plan.cpp) and shared.
#include <brasa/tensor/tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace brasa {

// Prime factors up to this run as direct O(p^2) passes; a larger one sends
// the whole length to Bluestein's algorithm.
constexpr int kFftLargestRadix = 31;

// Complex numbers (re, im) in double, with a float copy for float transforms.
struct FftTable {
  std::vector<double> d;
  std::vector<float> f;
  void push(double re, double im);
  template <class T>
  const T* data() const {
    if constexpr (sizeof(T) == sizeof(double))
      return d.data();
    else
      return f.data();
  }
};

struct FftPlan {
  int64_t n = 0;
  // Passes of the Stockham autosort transform (exp(-2 pi i / n) as the
  // root), in order; their product is n. Empty for n = 1 and for Bluestein.
  std::vector<int> radices;
  // Pass s multiplies its output t of block j (j < m = len / p, t in [1, p))
  // by exp(-2 pi i j t / len): (p - 1) twiddles per block, from offset[s].
  FftTable twiddles;
  std::vector<int64_t> offsets;
  // The p-th roots of unity of each pass whose radix has no unrolled
  // butterfly (7, 11, ...), from root_offsets[s] (-1 for the others).
  FftTable roots;
  std::vector<int64_t> root_offsets;
  // exp(-pi i k / n), k in [0, n]: what turns this length's transform of a
  // real signal of 2n samples, taken as n complex pairs, into its spectrum.
  FftTable real_twiddles;
  // Bluestein (bluestein_length > 0): exp(-pi i k^2 / n) for k < n, and the
  // transform of the conjugate chirp at length bluestein_length divided by
  // that length, run through `inner`.
  int64_t bluestein_length = 0;
  std::shared_ptr<const FftPlan> inner;
  FftTable chirp, chirp_spectrum;

  // Complex elements a transform needs in each of its two work buffers.
  int64_t work_length() const { return bluestein_length > 0 ? bluestein_length : n; }
};

// The plan for length n >= 1 (cached: the most recent lengths are kept).
std::shared_ptr<const FftPlan> fft_plan(int64_t n);

enum class FftKind : uint8_t {
  C2C,  // complex length n -> complex length n
  R2C,  // real length n -> complex length n / 2 + 1, exp(-...) always
  C2R,  // complex length n / 2 + 1 -> real length n, exp(+...) always; the
        // imaginary parts of frequencies 0 and (even n) n / 2 play no part
};

// out[o, k, i] = scale * sum_j in[o, j, i] exp(-+2 pi i j k / n) (+ when
// inverse, C2C only): transforms of length n along the middle dim of
// contiguous [outer, length, inner] tensors, float or double (complex ones
// as kComplexFloat / kComplexDouble). Rows adjacent in the inner dim run in
// vector lanes, so a caller with many rows of a last dim may transpose
// blocks of them into an inner dim first.
struct FftKernel {
  static constexpr const char* name = "fft";
  using Fn = void (*)(const Tensor& in, const Tensor& out, FftKind kind, int64_t n, bool inverse,
                      double scale, int64_t outer, int64_t inner);
};

}  // namespace brasa
