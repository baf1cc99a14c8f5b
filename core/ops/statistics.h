#pragma once
// libtorch's statistics and set functions: aminmax, argwhere, quantile /
// nanquantile, isin, unique_consecutive, cov / corrcoef, the trapezoid rule,
// histogram and put; and the window functions of signal processing
// (hann_window, hamming_window, blackman_window, bartlett_window,
// kaiser_window). Differentiable where PyTorch's are (through the ops they
// are made of).
#include <brasa/tensor/tensor.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace brasa {

std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt,
                                   bool keepdim = false);
// The indices of the non-zero elements, [count, dim].
Tensor argwhere(const Tensor& self);

// The q-th quantiles (q in [0, 1], one value or a 1-D tensor: then a new
// first dim) along dim or of all elements; interpolation "linear", "lower",
// "higher", "midpoint" or "nearest" between the two closest ranks.
Tensor quantile(const Tensor& self, double q, std::optional<int64_t> dim = std::nullopt,
                bool keepdim = false, const std::string& interpolation = "linear");
Tensor quantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim = std::nullopt,
                bool keepdim = false, const std::string& interpolation = "linear");
// quantile over the values that are not NaN (NaN where all are).
Tensor nanquantile(const Tensor& self, double q, std::optional<int64_t> dim = std::nullopt,
                   bool keepdim = false, const std::string& interpolation = "linear");
Tensor nanquantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim = std::nullopt,
                   bool keepdim = false, const std::string& interpolation = "linear");

// Whether each element of `elements` is in test_elements (not in it, with invert).
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique = false,
            bool invert = false);
Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique = false,
            bool invert = false);
Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique = false,
            bool invert = false);
// The first element of each run of equal consecutive values (of the
// flattened tensor, or slices along dim), where each element's run is, and
// the runs' lengths (the last two empty unless asked for).
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& self,
                                                      bool return_inverse = false,
                                                      bool return_counts = false,
                                                      std::optional<int64_t> dim = std::nullopt);
// The distinct slices of self along dim, sorted lexicographically, where
// each slice went (inverse) and how often each occurs (counts); the last two
// are empty unless asked for. `sorted` is accepted for libtorch's signature:
// the slices always come out sorted, as in PyTorch.
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool sorted = true,
                                              bool return_inverse = false,
                                              bool return_counts = false);

// The covariance matrix of the variables in self's rows (observations in
// columns), with integer frequency and/or real observation weights.
Tensor cov(const Tensor& self, int64_t correction = 1, const std::optional<Tensor>& fweights = {},
           const std::optional<Tensor>& aweights = {});
Tensor corrcoef(const Tensor& self);

// The integral of y along dim by the trapezoid rule, at points x or spacing dx.
Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor trapezoid(const Tensor& y, const Scalar& dx = 1, int64_t dim = -1);
Tensor trapz(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor trapz(const Tensor& y, double dx = 1, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, const Scalar& dx = 1, int64_t dim = -1);

// (counts, bin edges) of self's values in `bins` equal bins over range (the
// data's by default) or between the given edges; the last bin includes its
// right edge. weight: each value's weight; density: normalized to integrate to 1.
std::tuple<Tensor, Tensor> histogram(const Tensor& self, int64_t bins = 100,
                                     std::optional<std::vector<double>> range = std::nullopt,
                                     const std::optional<Tensor>& weight = {},
                                     bool density = false);
std::tuple<Tensor, Tensor> histogram(const Tensor& self, const Tensor& bins,
                                     const std::optional<Tensor>& weight = {},
                                     bool density = false);

// The joint histogram of the points in self's rows (self [..., D]: D
// coordinates each) over bins[i] equal bins per coordinate (range: D pairs
// min, max; the data's by default) or between the given edges per
// coordinate; returns (counts [bins...], the D edge tensors).
std::tuple<Tensor, std::vector<Tensor>> histogramdd(
    const Tensor& self, IntArrayRef bins, std::optional<std::vector<double>> range = std::nullopt,
    const std::optional<Tensor>& weight = {}, bool density = false);
std::tuple<Tensor, std::vector<Tensor>> histogramdd(
    const Tensor& self, int64_t bins, std::optional<std::vector<double>> range = std::nullopt,
    const std::optional<Tensor>& weight = {}, bool density = false);
std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& self, TensorList bins,
                                                    const std::optional<Tensor>& weight = {},
                                                    bool density = false);

// The derivative estimated by central differences in the interior and one-
// sided differences of order edge_order (1 or 2) at the ends, along each of
// `dim` (all dims by default), at sample points spaced `spacing` apart or at
// the given coordinates (one 1-D tensor per dim). One tensor per dim.
std::vector<Tensor> gradient(const Tensor& self,
                             const std::optional<Scalar>& spacing = std::nullopt,
                             std::optional<int64_t> dim = std::nullopt, int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& self, const Scalar& spacing, IntArrayRef dim,
                             int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& self, IntArrayRef dim, int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& self, ArrayRef<Scalar> spacing,
                             std::optional<int64_t> dim = std::nullopt, int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& self, ArrayRef<Scalar> spacing, IntArrayRef dim,
                             int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& self, TensorList spacing,
                             std::optional<int64_t> dim = std::nullopt, int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& self, TensorList spacing, IntArrayRef dim,
                             int64_t edge_order = 1);

// self (as if flattened) with the elements at `index` replaced by (or, with
// accumulate, increased by) source's.
Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false);

// Window functions of length window_length; periodic ones are the first
// window_length of a symmetric window one longer (for spectral analysis).
Tensor hann_window(int64_t window_length, bool periodic = true, const TensorOptions& options = {});
Tensor hamming_window(int64_t window_length, bool periodic = true, double alpha = 0.54,
                      double beta = 0.46, const TensorOptions& options = {});
Tensor blackman_window(int64_t window_length, bool periodic = true,
                       const TensorOptions& options = {});
Tensor bartlett_window(int64_t window_length, bool periodic = true,
                       const TensorOptions& options = {});
Tensor kaiser_window(int64_t window_length, bool periodic = true, double beta = 12.0,
                     const TensorOptions& options = {});
// libtorch's forms with the options right after the length (periodic).
inline Tensor hann_window(int64_t window_length, const TensorOptions& options) {
  return hann_window(window_length, true, options);
}
inline Tensor hamming_window(int64_t window_length, const TensorOptions& options) {
  return hamming_window(window_length, true, 0.54, 0.46, options);
}
inline Tensor blackman_window(int64_t window_length, const TensorOptions& options) {
  return blackman_window(window_length, true, options);
}
inline Tensor bartlett_window(int64_t window_length, const TensorOptions& options) {
  return bartlett_window(window_length, true, options);
}
inline Tensor kaiser_window(int64_t window_length, const TensorOptions& options) {
  return kaiser_window(window_length, true, 12.0, options);
}

}  // namespace brasa
