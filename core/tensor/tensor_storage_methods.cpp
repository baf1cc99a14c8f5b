// libtorch's Tensor methods about storage and metadata (set_, is_set_to,
// alias, tensor_data, to_dense, fill_diagonal_), the remaining in-place
// sampling methods (ops/random.cpp), and further method spellings of free
// functions (linear algebra, statistics, spectral, in-place forms). resize_
// lives in tensor_methods.cpp beside the memory formats it uses.
#include <brasa/ops/aliases.h>
#include <brasa/ops/arrange.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/copy_variants.h>
#include <brasa/ops/decompositions.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/math_extra.h>
#include <brasa/ops/random.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/special.h>
#include <brasa/ops/spectral.h>
#include <brasa/ops/split_combine.h>
#include <brasa/ops/statistics.h>
#include <brasa/ops/unary.h>
#include <brasa/tensor/indexing.h>
#include <brasa/tensor/tensor.h>

#include <cmath>

namespace brasa {

// ---- storage and metadata ----

Tensor& Tensor::set_(const Tensor& source) {
  BRASA_CHECK(!(requires_grad() && is_leaf()),
              "set_: a leaf Variable that requires grad is being used in an in-place operation.");
  BRASA_CHECK(source.dtype() == dtype(), "set_: expected source of dtype ", dtype(), ", got ",
              source.dtype());
  BRASA_CHECK(source.device() == device(), "set_: expected source on ", device(), ", got ",
              source.device());
  impl()->set_storage(source.storage());
  impl()->set_storage_offset(source.storage_offset());
  impl()->set_sizes_and_strides(source.sizes(), source.strides());
  return *this;
}

Tensor& Tensor::set_() {
  BRASA_CHECK(!(requires_grad() && is_leaf()),
              "set_: a leaf Variable that requires grad is being used in an in-place operation.");
  impl()->set_storage(Storage::allocate(0, device()));
  impl()->set_storage_offset(0);
  impl()->set_sizes_and_strides({0}, {1});
  return *this;
}

bool Tensor::is_set_to(const Tensor& other) const {
  return storage().is_alias_of(other.storage()) && storage_offset() == other.storage_offset() &&
         sizes() == other.sizes() && strides() == other.strides();
}

// A view of the whole tensor: same storage and metadata, gradients flow.
Tensor Tensor::alias() const { return as_strided(sizes(), strides(), storage_offset()); }
// The data without the autograd history (libtorch's .data()).
Tensor Tensor::tensor_data() const { return detach(); }
Tensor Tensor::variable_data() const { return detach(); }
// Brasa tensors are all strided (dense): to_dense only converts the dtype.
Tensor Tensor::to_dense(std::optional<ScalarType> dtype) const {
  return dtype ? to(*dtype) : *this;
}
Tensor Tensor::narrow_copy(int64_t d, int64_t start, int64_t length) const {
  return brasa::narrow_copy(*this, d, start, length);
}
Tensor Tensor::as_strided_scatter(const Tensor& src, IntArrayRef size, IntArrayRef stride,
                                  std::optional<int64_t> offset) const {
  return brasa::as_strided_scatter(*this, src, size, stride, offset);
}
std::vector<Tensor> Tensor::unsafe_chunk(int64_t chunks, int64_t d) const {
  return brasa::unsafe_chunk(*this, chunks, d);
}
std::vector<Tensor> Tensor::unsafe_split(int64_t split_size, int64_t d) const {
  return brasa::unsafe_split(*this, split_size, d);
}
std::vector<Tensor> Tensor::unsafe_split_with_sizes(IntArrayRef sizes, int64_t d) const {
  return brasa::unsafe_split_with_sizes(*this, sizes, d);
}
Tensor Tensor::index_put(const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                         bool accumulate) const {
  return brasa::index_put(*this, indices, values, accumulate);
}

Tensor& Tensor::fill_diagonal_(const Scalar& fill_value, bool wrap) {
  BRASA_CHECK(dim() >= 2, "dimensions must larger than 1");
  for (int64_t d = 1; d < dim() && dim() > 2; ++d)
    BRASA_CHECK(size(d) == size(0), "all dimensions of input must be of equal length");
  const auto longs = TensorOptions().dtype(kLong).device(device());
  const int64_t rows = size(0), cols = size(1);
  std::vector<TensorIndex> at;
  if (dim() == 2 && wrap && rows > cols + 1) {
    // numpy's wrap: every (cols + 1)-th element of the row-major matrix.
    Tensor flat = arange(0, rows * cols, cols + 1, longs);
    at = {brasa::div(flat, cols, "floor"), brasa::remainder(flat, cols)};
  } else {
    Tensor diagonal = arange(std::min(rows, cols), longs);
    at.assign(static_cast<size_t>(dim()), diagonal);
  }
  return index_put_(at, fill_value);
}

// ---- sampling in place ----

Tensor& Tensor::exponential_(double lambd) { return brasa::exponential_(*this, lambd); }
Tensor& Tensor::cauchy_(double median, double sigma) {
  return brasa::cauchy_(*this, median, sigma);
}
Tensor& Tensor::log_normal_(double mean, double std) {
  return brasa::log_normal_(*this, mean, std);
}
Tensor& Tensor::geometric_(double p) { return brasa::geometric_(*this, p); }

// ---- further spellings of free functions ----

Tensor Tensor::cholesky_inverse(bool upper) const { return brasa::cholesky_inverse(*this, upper); }
Tensor Tensor::cholesky_solve(const Tensor& input2, bool upper) const {
  return brasa::cholesky_solve(*this, input2, upper);
}
Tensor Tensor::lu_solve(const Tensor& LU_data, const Tensor& LU_pivots) const {
  return brasa::lu_solve(*this, LU_data, LU_pivots);
}
std::tuple<Tensor, Tensor> Tensor::triangular_solve(const Tensor& A, bool upper, bool transpose,
                                                    bool unitriangular) const {
  return brasa::triangular_solve(*this, A, upper, transpose, unitriangular);
}
std::tuple<Tensor, Tensor> Tensor::geqrf() const { return brasa::geqrf(*this); }
Tensor Tensor::orgqr(const Tensor& input2) const { return brasa::orgqr(*this, input2); }
Tensor Tensor::ormqr(const Tensor& input2, const Tensor& input3, bool left, bool transpose) const {
  return brasa::ormqr(*this, input2, input3, left, transpose);
}
std::tuple<Tensor, Tensor> Tensor::symeig(bool eigenvectors, bool upper) const {
  return brasa::symeig(*this, eigenvectors, upper);
}
Tensor Tensor::cov(int64_t correction, const std::optional<Tensor>& fweights,
                   const std::optional<Tensor>& aweights) const {
  return brasa::cov(*this, correction, fweights, aweights);
}
Tensor Tensor::quantile(double q, std::optional<int64_t> d, bool keepdim,
                        const std::string& interpolation) const {
  return brasa::quantile(*this, q, d, keepdim, interpolation);
}
Tensor Tensor::quantile(const Tensor& q, std::optional<int64_t> d, bool keepdim,
                        const std::string& interpolation) const {
  return brasa::quantile(*this, q, d, keepdim, interpolation);
}
Tensor Tensor::nanquantile(double q, std::optional<int64_t> d, bool keepdim,
                           const std::string& interpolation) const {
  return brasa::nanquantile(*this, q, d, keepdim, interpolation);
}
Tensor Tensor::nanquantile(const Tensor& q, std::optional<int64_t> d, bool keepdim,
                           const std::string& interpolation) const {
  return brasa::nanquantile(*this, q, d, keepdim, interpolation);
}
std::tuple<Tensor, Tensor> Tensor::histogram(int64_t bins, std::optional<std::vector<double>> range,
                                             const std::optional<Tensor>& weight,
                                             bool density) const {
  return brasa::histogram(*this, bins, std::move(range), weight, density);
}
std::tuple<Tensor, Tensor> Tensor::histogram(const Tensor& bins,
                                             const std::optional<Tensor>& weight,
                                             bool density) const {
  return brasa::histogram(*this, bins, weight, density);
}
Tensor Tensor::stft(int64_t n_fft, std::optional<int64_t> hop_length,
                    std::optional<int64_t> win_length, const std::optional<Tensor>& window,
                    bool normalized, std::optional<bool> onesided,
                    std::optional<bool> return_complex) const {
  return brasa::stft(*this, n_fft, hop_length, win_length, window, normalized, onesided,
                     return_complex);
}
Tensor Tensor::stft(int64_t n_fft, std::optional<int64_t> hop_length,
                    std::optional<int64_t> win_length, const std::optional<Tensor>& window,
                    bool center, const std::string& pad_mode, bool normalized,
                    std::optional<bool> onesided, std::optional<bool> return_complex) const {
  return brasa::stft(*this, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                     onesided, return_complex);
}
Tensor Tensor::istft(int64_t n_fft, std::optional<int64_t> hop_length,
                     std::optional<int64_t> win_length, const std::optional<Tensor>& window,
                     bool center, bool normalized, std::optional<bool> onesided,
                     std::optional<int64_t> length, bool return_complex) const {
  return brasa::istft(*this, n_fft, hop_length, win_length, window, center, normalized, onesided,
                      length, return_complex);
}

// In-place forms: the result copied into the tensor (autograd records the copy).
Tensor& Tensor::renorm_(const Scalar& p, int64_t d, const Scalar& maxnorm) {
  return copy_(brasa::renorm(*this, p, d, maxnorm));
}
Tensor& Tensor::cumprod_(int64_t d, std::optional<ScalarType> dtype) {
  return copy_(brasa::cumprod(*this, d, dtype));
}
// float_power computes in double: the in-place form needs a double base.
static void check_float_power_base(ScalarType t) {
  BRASA_CHECK(t == kDouble || t == kComplexDouble, "the base given to float_power_ has dtype ", t,
              " but the operation's result requires dtype Double");
}
Tensor& Tensor::float_power_(const Tensor& e) {
  check_float_power_base(scalar_type());
  return copy_(brasa::float_power(*this, e));
}
Tensor& Tensor::float_power_(const Scalar& e) {
  check_float_power_base(scalar_type());
  return copy_(brasa::float_power(*this, e));
}
Tensor& Tensor::igamma_(const Tensor& o) { return copy_(brasa::igamma(*this, o)); }
Tensor& Tensor::igammac_(const Tensor& o) { return copy_(brasa::igammac(*this, o)); }
Tensor& Tensor::swapaxes_(int64_t a, int64_t b) { return transpose_(a, b); }
Tensor& Tensor::swapdims_(int64_t a, int64_t b) { return transpose_(a, b); }
Tensor& Tensor::bitwise_left_shift_(const Tensor& o) {
  return copy_(brasa::bitwise_left_shift(*this, o));
}
Tensor& Tensor::bitwise_left_shift_(const Scalar& o) {
  return copy_(brasa::bitwise_left_shift(*this, o));
}
Tensor& Tensor::bitwise_right_shift_(const Tensor& o) {
  return copy_(brasa::bitwise_right_shift(*this, o));
}
Tensor& Tensor::bitwise_right_shift_(const Scalar& o) {
  return copy_(brasa::bitwise_right_shift(*this, o));
}

}  // namespace brasa
