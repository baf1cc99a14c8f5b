#include <brasa/ops/elementwise.h>
#include <brasa/ops/arrange.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/counting.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/sort.h>
#include <brasa/ops/special.h>
#include <brasa/ops/statistics.h>
#include <brasa/ops/unary.h>

#include <cmath>
#include <numbers>

namespace brasa {

using detail::check_defined;

std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  check_defined("aminmax", self);
  BRASA_CHECK(self.numel() > 0 || dim, "aminmax(): cannot compute aminmax over an empty tensor");
  if (!dim) {
    Tensor lo = amin(self.reshape({-1}), {0}), hi = amax(self.reshape({-1}), {0});
    if (keepdim) {
      std::vector<int64_t> ones_shape(self.dim(), 1);
      return {lo.reshape(ones_shape), hi.reshape(ones_shape)};
    }
    return {lo, hi};
  }
  return {amin(self, {*dim}, keepdim), amax(self, {*dim}, keepdim)};
}

Tensor argwhere(const Tensor& self) {
  check_defined("argwhere", self);
  return nonzero(self);
}

namespace {
Tensor quantile_impl(const char* op, const Tensor& self, const Tensor& q_in, bool scalar_q,
                     std::optional<int64_t> dim, bool keepdim, const std::string& interpolation,
                     bool ignore_nan) {
  check_defined(op, self);
  BRASA_CHECK(self.is_floating_point(), op, "() input tensor must be either float or double dtype");
  BRASA_CHECK(q_in.defined() && q_in.dim() <= 1, op,
              "() q must be a scalar or 1D tensor, got shape ",
              q_in.defined() ? q_in.sizes() : IntArrayRef{});
  BRASA_CHECK(interpolation == "linear" || interpolation == "lower" || interpolation == "higher" ||
                  interpolation == "midpoint" || interpolation == "nearest",
              op, "() interpolation must be one of linear, lower, higher, midpoint or nearest. ",
              "Got ", interpolation);
  Tensor q = q_in.reshape({-1}).to(self.scalar_type()).to(self.device());
  if (q.numel() > 0)
    BRASA_CHECK((q >= 0).logical_and(q <= 1).all().item<bool>(), op,
                "() q values must be in the range [0, 1]");
  Tensor x = dim ? self : self.reshape({-1});
  const int64_t d = dim ? maybe_wrap_dim(*dim, std::max<int64_t>(self.dim(), 1), op) : 0;
  if (x.dim() == 0) x = x.reshape({1});
  BRASA_CHECK(x.size(d) > 0, op, "() input tensor must be non-empty");
  // Sorted along the last dim; NaN sorts last.
  Tensor s = std::get<0>(sort(x.movedim(d, -1), -1));
  const int64_t n = s.size(-1), Q = q.numel();
  Tensor is_nan = isnan(s);
  Tensor valid = ignore_nan ? (~is_nan).sum({-1}, true).to(s.scalar_type())
                            : full_like(s.narrow(-1, 0, 1), static_cast<double>(n));
  // Each quantile's rank among the valid values: [Q, ..., 1].
  std::vector<int64_t> qshape(s.dim() + 1, 1);
  qshape[0] = Q;
  Tensor rank = q.reshape(qshape) * (valid.unsqueeze(0) - 1).clamp_min(0);
  Tensor lo = rank.floor(), hi = rank.ceil();
  if (interpolation == "nearest") lo = hi = rank.round();
  std::vector<int64_t> expanded{Q};
  expanded.insert(expanded.end(), s.sizes().begin(), s.sizes().end());
  Tensor se = s.unsqueeze(0).expand(expanded);
  Tensor v_lo = se.gather(-1, lo.to(kLong)), v_hi = se.gather(-1, hi.to(kLong));
  Tensor out = interpolation == "lower"      ? v_lo
               : interpolation == "higher"   ? v_hi
               : interpolation == "midpoint" ? (v_lo + v_hi) * 0.5
               : interpolation == "nearest"  ? v_lo
                                             : v_lo + (v_hi - v_lo) * (rank - lo);
  // NaN where a slice holds a NaN (quantile) or nothing but NaN (nanquantile).
  Tensor undefined = ignore_nan ? (valid == 0).unsqueeze(0) : is_nan.any(-1, true).unsqueeze(0);
  out = where(undefined.expand(out.sizes()), full_like(out, NAN), out).squeeze(-1);  // [Q, ...]
  if (keepdim) {
    if (dim) {
      out = out.unsqueeze(d + 1);
    } else {
      std::vector<int64_t> shape{Q};
      shape.insert(shape.end(), self.dim(), 1);
      out = out.reshape(shape);
    }
  }
  return scalar_q ? out.squeeze(0) : out;
}
}  // namespace

Tensor quantile(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                const std::string& interpolation) {
  return quantile_impl("quantile", self, scalar_tensor(q, TensorOptions().dtype(kDouble)), true,
                       dim, keepdim, interpolation, false);
}
Tensor quantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                const std::string& interpolation) {
  return quantile_impl("quantile", self, q, q.defined() && q.dim() == 0, dim, keepdim,
                       interpolation, false);
}
Tensor nanquantile(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                   const std::string& interpolation) {
  return quantile_impl("nanquantile", self, scalar_tensor(q, TensorOptions().dtype(kDouble)), true,
                       dim, keepdim, interpolation, true);
}
Tensor nanquantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   const std::string& interpolation) {
  return quantile_impl("nanquantile", self, q, q.defined() && q.dim() == 0, dim, keepdim,
                       interpolation, true);
}

Tensor isin(const Tensor& elements, const Tensor& test_elements, bool /*assume_unique*/,
            bool invert) {
  check_defined("isin", elements);
  check_defined("isin", test_elements);
  const ScalarType t = promoteTypes(elements.scalar_type(), test_elements.scalar_type());
  Tensor e = elements.to(t), test = test_elements.reshape({-1}).to(t).to(elements.device());
  Tensor found;
  if (test.numel() == 0) {
    found = zeros(elements.sizes(), TensorOptions().dtype(kBool).device(elements.device()));
  } else {
    // Binary search in the sorted test elements.
    Tensor sorted = std::get<0>(sort(test));
    Tensor at = searchsorted(sorted, e.reshape({-1})).clamp_max(test.numel() - 1);
    found = (index_select(sorted, 0, at).view(e.sizes()) == e);
  }
  return invert ? found.logical_not() : found;
}
Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique, bool invert) {
  check_defined("isin", elements);
  return isin(elements, scalar_tensor(test_element, TensorOptions().device(elements.device())),
              assume_unique, invert);
}
Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique, bool invert) {
  check_defined("isin", test_elements);
  return isin(scalar_tensor(element, TensorOptions().device(test_elements.device())), test_elements,
              assume_unique, invert);
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& self, bool return_inverse,
                                                      bool return_counts,
                                                      std::optional<int64_t> dim) {
  check_defined("unique_consecutive", self);
  const auto long_opts = TensorOptions().dtype(kLong).device(self.device());
  Tensor x = dim ? self.movedim(maybe_wrap_dim(*dim, self.dim(), "unique_consecutive"), 0)
                 : self.reshape({-1});
  const int64_t n = x.size(0);
  if (n == 0) return {dim ? self.clone() : x.clone(), zeros({0}, long_opts), zeros({0}, long_opts)};
  Tensor rows = x.reshape({n, -1});
  // starts[i]: element (slice) i differs from the one before it.
  Tensor differs = (rows.narrow(0, 1, n - 1) != rows.narrow(0, 0, n - 1)).any(1);
  Tensor starts = cat({ones({1}, TensorOptions().dtype(kBool).device(self.device())), differs});
  Tensor first = nonzero(starts).reshape({-1});
  Tensor out = index_select(x, 0, first);
  if (dim) out = out.movedim(0, maybe_wrap_dim(*dim, self.dim(), "unique_consecutive"));
  Tensor inverse, counts;
  if (return_inverse) {
    inverse = cumsum(starts.to(kLong), 0) - 1;
    if (!dim) inverse = inverse.view(self.sizes());
  } else {
    inverse = zeros({0}, long_opts);
  }
  counts = return_counts ? diff(cat({first, full({1}, n, long_opts)})) : zeros({0}, long_opts);
  return {out, inverse, counts};
}

Tensor cov(const Tensor& self, int64_t correction, const std::optional<Tensor>& fweights,
           const std::optional<Tensor>& aweights) {
  check_defined("cov", self);
  BRASA_CHECK(self.dim() <= 2, "cov(): expected input to have two or fewer dimensions but got an ",
              "input with ", self.dim(), " dimensions");
  Tensor x = self.dim() < 2 ? self.reshape({1, -1}) : self;
  if (!x.is_floating_point()) x = x.to(get_default_dtype());
  const int64_t N = x.size(1);
  Tensor w;
  if (fweights && fweights->defined()) {
    BRASA_CHECK(fweights->dim() <= 1 && fweights->numel() == N &&
                    isIntegralType(fweights->scalar_type(), false),
                "cov(): expected fweights to be an integer tensor with ", N, " elements");
    BRASA_CHECK((*fweights >= 0).all().item<bool>(), "cov(): fweights cannot be negative");
    w = fweights->to(x.scalar_type());
  }
  if (aweights && aweights->defined()) {
    BRASA_CHECK(aweights->dim() <= 1 && aweights->numel() == N && aweights->is_floating_point(),
                "cov(): expected aweights to be a floating tensor with ", N, " elements");
    BRASA_CHECK((*aweights >= 0).all().item<bool>(), "cov(): aweights cannot be negative");
    w = w.defined() ? w * *aweights : aweights->to(x.scalar_type());
  }
  Tensor avg, norm_factor;
  if (w.defined()) {
    Tensor w_sum = w.sum();
    avg = (x * w).sum({1}) / w_sum;
    if (correction == 0)
      norm_factor = w_sum;
    else if (!(aweights && aweights->defined()))
      norm_factor = w_sum - static_cast<double>(correction);
    else
      norm_factor = w_sum - (w * *aweights).sum() / w_sum * static_cast<double>(correction);
  } else {
    avg = x.mean({1});
    norm_factor = scalar_tensor(static_cast<double>(N - correction), x.options());
  }
  norm_factor = norm_factor.clamp_min(0);
  Tensor xm = x - avg.unsqueeze(1);
  Tensor c = matmul(w.defined() ? xm * w : xm, xm.t()) / norm_factor;
  return self.dim() < 2 ? c.squeeze() : c;
}

Tensor corrcoef(const Tensor& self) {
  Tensor c = cov(self);
  if (c.dim() == 0) return c / c;
  Tensor stddev = c.diagonal().sqrt();
  return (c / stddev.unsqueeze(1) / stddev.unsqueeze(0)).clamp(-1, 1);
}

namespace {
// Sample spacings along dim: x's differences, shaped to broadcast with y's intervals.
Tensor spacings(const char* op, const Tensor& y, const Tensor& x, int64_t d) {
  check_defined(op, x);
  if (x.dim() == 1) {
    BRASA_CHECK(x.size(0) == y.size(d), op, ": There must be one `x` value for each sample ",
                "point, got ", x.size(0), " values for ", y.size(d), " samples");
    std::vector<int64_t> shape(y.dim(), 1);
    shape[d] = y.size(d) - 1;
    return diff(x).reshape(shape);
  }
  BRASA_CHECK(x.dim() == y.dim() && x.size(d) == y.size(d), op,
              ": x must be 1-D or shaped like y along dim, got ", x.sizes(), " and ", y.sizes());
  return diff(x, 1, d);
}
Tensor interval_areas(const Tensor& y, int64_t d) {
  const int64_t n = y.size(d);
  return (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * 0.5;
}
int64_t trapezoid_dim(const char* op, const Tensor& y, int64_t dim) {
  check_defined(op, y);
  BRASA_CHECK(y.dim() > 0, op, ": expected y to have at least one dimension");
  return maybe_wrap_dim(dim, y.dim(), op);
}
}  // namespace

Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  const int64_t d = trapezoid_dim("trapezoid", y, dim);
  if (y.size(d) == 0) return sum(y, {d});
  return sum(interval_areas(y, d) * spacings("trapezoid", y, x, d), {d});
}
Tensor trapezoid(const Tensor& y, const Scalar& dx, int64_t dim) {
  const int64_t d = trapezoid_dim("trapezoid", y, dim);
  if (y.size(d) == 0) return sum(y, {d});
  return sum(interval_areas(y, d), {d}) * dx;
}
Tensor trapz(const Tensor& y, const Tensor& x, int64_t dim) { return trapezoid(y, x, dim); }
Tensor trapz(const Tensor& y, double dx, int64_t dim) { return trapezoid(y, Scalar(dx), dim); }
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  const int64_t d = trapezoid_dim("cumulative_trapezoid", y, dim);
  if (y.size(d) == 0) return y.clone();
  return cumsum(interval_areas(y, d) * spacings("cumulative_trapezoid", y, x, d), d);
}
Tensor cumulative_trapezoid(const Tensor& y, const Scalar& dx, int64_t dim) {
  const int64_t d = trapezoid_dim("cumulative_trapezoid", y, dim);
  if (y.size(d) == 0) return y.clone();
  return cumsum(interval_areas(y, d), d) * dx;
}

namespace {
// Counts of the values in the bins between consecutive edges (the last bin closed).
std::tuple<Tensor, Tensor> histogram_with_edges(const Tensor& self, const Tensor& edges,
                                                const std::optional<Tensor>& weight, bool density) {
  BRASA_CHECK(self.is_floating_point(), "torch.histogram: input tensor and bins tensors should ",
              "have the same dtype, and a floating one; got ", self.scalar_type());
  const bool weighted = weight && weight->defined();
  if (weighted)
    BRASA_CHECK(weight->sizes() == self.sizes(), "torch.histogram: if weight tensor is provided ",
                "it should have the same shape as the input tensor, got ", weight->sizes(), " and ",
                self.sizes());
  Tensor v = self.detach().to(kCPU).to(kDouble).contiguous().reshape({-1});
  Tensor w = weighted ? weight->detach().to(kCPU).to(kDouble).contiguous().reshape({-1}) : Tensor();
  Tensor e = edges.detach().to(kCPU).to(kDouble).contiguous();
  const int64_t bins = e.numel() - 1;
  Tensor hist = zeros({bins}, TensorOptions().dtype(kDouble));
  const double* pe = e.data_ptr<double>();
  for (int64_t i = 0; i < v.numel(); ++i) {
    const double x = v.data_ptr<double>()[i];
    if (!(x >= pe[0] && x <= pe[bins])) continue;  // outside, or NaN
    int64_t b = std::upper_bound(pe, pe + bins + 1, x) - pe - 1;
    b = std::min(b, bins - 1);
    hist.data_ptr<double>()[b] += weighted ? w.data_ptr<double>()[i] : 1.0;
  }
  if (density) hist = hist / (hist.sum() * diff(e));
  return {hist.to(self.scalar_type()).to(self.device()),
          e.to(self.scalar_type()).to(self.device())};
}
}  // namespace

std::tuple<Tensor, Tensor> histogram(const Tensor& self, int64_t bins,
                                     std::optional<std::vector<double>> range,
                                     const std::optional<Tensor>& weight, bool density) {
  check_defined("histogram", self);
  BRASA_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins);
  double lo = 0, hi = 0;
  if (range) {
    BRASA_CHECK(range->size() == 2, "torch.histogram(): range must have 2 elements, got ",
                range->size());
    lo = (*range)[0];
    hi = (*range)[1];
  } else if (self.numel() > 0) {
    lo = self.min().item<double>();
    hi = self.max().item<double>();
  }
  BRASA_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histogram(): range of [", lo, ", ", hi,
              "] is not finite");
  BRASA_CHECK(lo <= hi, "torch.histogram(): min should not exceed max, but got min ", lo, " max ",
              hi);
  if (lo == hi) lo -= 0.5, hi += 0.5;  // NumPy's rule for a single value
  return histogram_with_edges(self, linspace(lo, hi, bins + 1, TensorOptions().dtype(kDouble)),
                              weight, density);
}
std::tuple<Tensor, Tensor> histogram(const Tensor& self, const Tensor& bins,
                                     const std::optional<Tensor>& weight, bool density) {
  check_defined("histogram", self);
  BRASA_CHECK(bins.defined() && bins.dim() == 1 && bins.numel() >= 2,
              "torch.histogram(): bins tensor should have one dimension and at least 2 elements");
  BRASA_CHECK((diff(bins.to(kDouble)) >= 0).all().item<bool>(),
              "torch.histogram(): bin edges must be non-decreasing");
  return histogram_with_edges(self, bins, weight, density);
}

Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  check_defined("put", self);
  check_defined("put", index);
  check_defined("put", source);
  BRASA_CHECK(index.scalar_type() == kLong, "put(): Expected a long tensor for index, but got ",
              index.scalar_type());
  BRASA_CHECK(index.numel() == source.numel(), "put(): Expected source and index to have the ",
              "same number of elements, but got source.numel() = ", source.numel(),
              ", index.numel() = ", index.numel());
  Tensor flat = self.reshape({-1});
  return index_put(flat, {index.reshape({-1})}, source.reshape({-1}).to(self.scalar_type()),
                   accumulate)
      .reshape(self.sizes());
}

namespace {
// A window's positions 0..M-1 over M = length (+1 when periodic), as float64,
// and its length; the caller drops the last value of a periodic window.
Tensor window_positions(const char* op, int64_t length, bool periodic, int64_t& m) {
  BRASA_CHECK(length >= 0, op, " requires non-negative window_length, got window_length=", length);
  m = periodic ? length + 1 : length;
  return arange(m, TensorOptions().dtype(kDouble));
}
Tensor finish_window(const Tensor& w, int64_t length, const TensorOptions& options) {
  const ScalarType t = options.has_dtype() ? options.dtype() : get_default_dtype();
  BRASA_CHECK(isFloatingType(t), "window functions expect a floating point dtype, got ", t);
  return w.narrow(0, 0, length).to(t).to(options.device());
}
Tensor trivial_window(int64_t length, const TensorOptions& options) {
  return finish_window(ones({length}, TensorOptions().dtype(kDouble)), length, options);
}
}  // namespace

Tensor hamming_window(int64_t window_length, bool periodic, double alpha, double beta,
                      const TensorOptions& options) {
  int64_t m = 0;
  Tensor n = window_positions("hamming_window", window_length, periodic, m);
  if (window_length <= 1) return trivial_window(window_length, options);
  Tensor w = alpha - beta * cos(n * (2 * std::numbers::pi / static_cast<double>(m - 1)));
  return finish_window(w, window_length, options);
}
Tensor hann_window(int64_t window_length, bool periodic, const TensorOptions& options) {
  return hamming_window(window_length, periodic, 0.5, 0.5, options);
}
Tensor blackman_window(int64_t window_length, bool periodic, const TensorOptions& options) {
  int64_t m = 0;
  Tensor n = window_positions("blackman_window", window_length, periodic, m);
  if (window_length <= 1) return trivial_window(window_length, options);
  const double step = 2 * std::numbers::pi / static_cast<double>(m - 1);
  Tensor w = 0.42 - 0.5 * cos(n * step) + 0.08 * cos(n * (2 * step));
  return finish_window(w, window_length, options);
}
Tensor bartlett_window(int64_t window_length, bool periodic, const TensorOptions& options) {
  int64_t m = 0;
  Tensor n = window_positions("bartlett_window", window_length, periodic, m);
  if (window_length <= 1) return trivial_window(window_length, options);
  Tensor w = 1 - (n * (2.0 / static_cast<double>(m - 1)) - 1).abs();
  return finish_window(w, window_length, options);
}
Tensor kaiser_window(int64_t window_length, bool periodic, double beta,
                     const TensorOptions& options) {
  int64_t m = 0;
  Tensor n = window_positions("kaiser_window", window_length, periodic, m);
  if (window_length <= 1) return trivial_window(window_length, options);
  Tensor r = n * (2.0 / static_cast<double>(m - 1)) - 1;
  Tensor w = i0((1 - r * r).clamp_min(0).sqrt() * beta) / detail::i0_scalar(beta);
  return finish_window(w, window_length, options);
}

}  // namespace brasa
