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

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool sorted,
                                              bool return_inverse, bool return_counts) {
  (void)sorted;  // always sorted, as PyTorch's
  check_defined("unique_dim", self);
  const int64_t d = maybe_wrap_dim(dim, self.dim(), "unique_dim");
  Tensor x = self.movedim(d, 0);
  const int64_t n = x.size(0);
  const auto long_opts = TensorOptions().dtype(kLong).device(self.device());
  Tensor rows = x.reshape({n, n == 0 ? 0 : -1});
  // Lexicographic order of the slices: stable sorts by each column, last first.
  Tensor order = arange(n, long_opts);
  for (int64_t c = rows.size(1) - 1; c >= 0 && n > 1; --c) {
    Tensor keys = index_select(rows.select(1, c), 0, order);
    order = index_select(order, 0, std::get<1>(sort(keys, std::optional<bool>(true), 0)));
  }
  auto [out, run_of_sorted, counts] =
      unique_consecutive(index_select(x, 0, order), return_inverse, return_counts, 0);
  Tensor inverse = zeros({0}, long_opts);
  if (return_inverse) inverse = zeros({n}, long_opts).index_put_({order}, run_of_sorted);
  return {out.movedim(0, d), inverse, counts};
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
// Counts of the points (rows of `points`, one coordinate per column) in the
// cells between consecutive edges of each coordinate (each last bin closed).
Tensor histogramdd_counts(const char* op, const Tensor& points, const std::vector<Tensor>& edges,
                          const std::optional<Tensor>& weight, bool density) {
  const int64_t dims = points.size(1), n = points.size(0);
  const bool weighted = weight && weight->defined();
  if (weighted)
    BRASA_CHECK(weight->numel() == n, op, ": if weight tensor is provided it should have the ",
                "same shape as the input tensor excluding its innermost dimension, got ",
                weight->sizes(), " for ", n, " points");
  Tensor v = points.detach().to(kCPU).to(kDouble).contiguous();
  Tensor w = weighted ? weight->detach().to(kCPU).to(kDouble).contiguous().reshape({-1}) : Tensor();
  std::vector<Tensor> e;
  DimVector shape;
  for (const Tensor& edge : edges) {
    e.push_back(edge.detach().to(kCPU).to(kDouble).contiguous());
    shape.push_back(edge.numel() - 1);
  }
  Tensor hist = zeros(shape, TensorOptions().dtype(kDouble));
  double* ph = hist.data_ptr<double>();
  const double* pv = v.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t cell = 0;
    bool inside = true;
    for (int64_t k = 0; k < dims && inside; ++k) {
      const double x = pv[i * dims + k];
      const double* pe = e[k].data_ptr<double>();
      const int64_t bins = shape[k];
      if (!(x >= pe[0] && x <= pe[bins])) {  // outside, or NaN
        inside = false;
        break;
      }
      const int64_t b =
          std::min<int64_t>(std::upper_bound(pe, pe + bins + 1, x) - pe - 1, bins - 1);
      cell = cell * bins + b;
    }
    if (inside) ph[cell] += weighted ? w.data_ptr<double>()[i] : 1.0;
  }
  if (density) {
    // Divided by the total and by each cell's volume.
    Tensor volume = ones({}, TensorOptions().dtype(kDouble));
    for (int64_t k = 0; k < dims; ++k) {
      std::vector<int64_t> view(dims, 1);
      view[k] = shape[k];
      volume = volume * diff(e[k]).view(view);
    }
    hist = hist / (hist.sum() * volume);
  }
  return hist;
}

std::tuple<Tensor, Tensor> histogram_with_edges(const Tensor& self, const Tensor& edges,
                                                const std::optional<Tensor>& weight, bool density) {
  BRASA_CHECK(self.is_floating_point(), "torch.histogram: input tensor and bins tensors should ",
              "have the same dtype, and a floating one; got ", self.scalar_type());
  if (weight && weight->defined())
    BRASA_CHECK(weight->sizes() == self.sizes(), "torch.histogram: if weight tensor is provided ",
                "it should have the same shape as the input tensor, got ", weight->sizes(), " and ",
                self.sizes());
  Tensor hist =
      histogramdd_counts("torch.histogram", self.reshape({-1, 1}), {edges}, weight, density);
  return {hist.to(self.scalar_type()).to(self.device()),
          edges.to(kDouble).to(self.scalar_type()).to(self.device())};
}

// NumPy's rule: equal ends of a range are moved half a unit apart.
std::pair<double, double> widened(double lo, double hi) {
  if (lo == hi) return {lo - 0.5, hi + 0.5};
  return {lo, hi};
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
  std::tie(lo, hi) = widened(lo, hi);
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

namespace {
// self [..., D] as D-column rows of points, checked.
Tensor histogramdd_points(const Tensor& self, int64_t coordinates) {
  check_defined("histogramdd", self);
  BRASA_CHECK(self.dim() >= 2, "torch.histogramdd: input tensor should have at least 2 ",
              "dimensions, but got ", self.dim());
  BRASA_CHECK(self.is_floating_point(), "torch.histogramdd: input tensor should have a ",
              "floating-point dtype, got ", self.scalar_type());
  const int64_t dims = self.size(-1);
  BRASA_CHECK(coordinates == dims, "torch.histogramdd: expected ", dims,
              " sequences of bin edges or bin counts for the ", dims,
              "-dimensional histogram, but got ", coordinates);
  return self.reshape({-1, dims});
}

std::tuple<Tensor, std::vector<Tensor>> histogramdd_result(const Tensor& self, const Tensor& points,
                                                           const std::vector<Tensor>& edges,
                                                           const std::optional<Tensor>& weight,
                                                           bool density) {
  Tensor hist = histogramdd_counts("torch.histogramdd", points, edges, weight, density);
  std::vector<Tensor> out_edges;
  for (const Tensor& e : edges) out_edges.push_back(e.to(self.scalar_type()).to(self.device()));
  return {hist.to(self.scalar_type()).to(self.device()), out_edges};
}
}  // namespace

std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& self, IntArrayRef bins,
                                                    std::optional<std::vector<double>> range,
                                                    const std::optional<Tensor>& weight,
                                                    bool density) {
  Tensor points = histogramdd_points(self, static_cast<int64_t>(bins.size()));
  const int64_t dims = points.size(1);
  if (range)
    BRASA_CHECK(static_cast<int64_t>(range->size()) == 2 * dims, "torch.histogramdd: for a ", dims,
                "-dimensional histogram, range should have ", 2 * dims, " elements, but got ",
                range->size());
  std::vector<Tensor> edges;
  for (int64_t k = 0; k < dims; ++k) {
    BRASA_CHECK(bins[k] > 0, "torch.histogramdd(): bins must be > 0, but got ", bins[k],
                " for dimension ", k);
    double lo = 0, hi = 0;
    if (range) {
      lo = (*range)[2 * k];
      hi = (*range)[2 * k + 1];
    } else if (points.size(0) > 0) {
      lo = points.select(1, k).min().item<double>();
      hi = points.select(1, k).max().item<double>();
    }
    BRASA_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histogramdd(): range of [", lo, ", ",
                hi, "] is not finite");
    BRASA_CHECK(lo <= hi, "torch.histogramdd(): min should not exceed max, but got min ", lo,
                " max ", hi, " for dimension ", k);
    std::tie(lo, hi) = widened(lo, hi);
    edges.push_back(linspace(lo, hi, bins[k] + 1, TensorOptions().dtype(kDouble)));
  }
  return histogramdd_result(self, points, edges, weight, density);
}
std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& self, int64_t bins,
                                                    std::optional<std::vector<double>> range,
                                                    const std::optional<Tensor>& weight,
                                                    bool density) {
  check_defined("histogramdd", self);
  std::vector<int64_t> each(static_cast<size_t>(self.dim() == 0 ? 0 : self.size(-1)), bins);
  return histogramdd(self, IntArrayRef(each), std::move(range), weight, density);
}
std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& self, TensorList bins,
                                                    const std::optional<Tensor>& weight,
                                                    bool density) {
  Tensor points = histogramdd_points(self, static_cast<int64_t>(bins.size()));
  std::vector<Tensor> edges;
  for (size_t k = 0; k < bins.size(); ++k) {
    BRASA_CHECK(bins[k].defined() && bins[k].dim() == 1 && bins[k].numel() >= 2,
                "torch.histogramdd(): bins tensor should have one dimension and at least 2 "
                "elements, got ",
                bins[k].sizes(), " for dimension ", k);
    Tensor e = bins[k].to(kDouble);
    BRASA_CHECK((diff(e) >= 0).all().item<bool>(),
                "torch.histogramdd(): bin edges must be non-decreasing (dimension ", k, ")");
    edges.push_back(e);
  }
  return histogramdd_result(self, points, edges, weight, density);
}

namespace {
// Slice [start, end) of x along d (negative positions count from the end).
Tensor part(const Tensor& x, int64_t d, int64_t start, int64_t end) {
  const int64_t n = x.size(d);
  if (start < 0) start += n;
  if (end <= 0) end += n;
  return x.narrow(d, start, end - start);
}

// The derivative along d, at uniform spacing h or at coordinates x.
Tensor gradient_along(const Tensor& f, int64_t d, const Tensor& coordinates, double h,
                      int64_t edge_order) {
  Tensor center, first, last;
  if (!coordinates.defined()) {
    center = (part(f, d, 2, 0) - part(f, d, 0, -2)) / (2 * h);
    if (edge_order == 1) {
      first = (part(f, d, 1, 2) - part(f, d, 0, 1)) / h;
      last = (part(f, d, -1, 0) - part(f, d, -2, -1)) / h;
    } else {
      first = (part(f, d, 0, 1) * -3 + part(f, d, 1, 2) * 4 - part(f, d, 2, 3)) / (2 * h);
      last = (part(f, d, -1, 0) * 3 - part(f, d, -2, -1) * 4 + part(f, d, -3, -2)) / (2 * h);
    }
  } else {
    // Second-order accurate differences at uneven spacing (hl to the left of
    // each point, hr to its right).
    Tensor dx = diff(coordinates.to(f.scalar_type()));
    std::vector<int64_t> along(f.dim(), 1);
    along[d] = -1;
    Tensor hl = part(dx, 0, 0, -1).view(along), hr = part(dx, 0, 1, 0).view(along);
    center =
        (part(f, d, 0, -2) * (-hr / (hl * (hl + hr))) +
         part(f, d, 1, -1) * ((hr - hl) / (hl * hr)) + part(f, d, 2, 0) * (hl / (hr * (hl + hr))));
    const Tensor a = dx[0], b = dx[1], y = dx[-2], z = dx[-1];
    if (edge_order == 1) {
      first = (part(f, d, 1, 2) - part(f, d, 0, 1)) / a;
      last = (part(f, d, -1, 0) - part(f, d, -2, -1)) / z;
    } else {
      first = part(f, d, 0, 1) * (-(2 * a + b) / (a * (a + b))) +
              part(f, d, 1, 2) * ((a + b) / (a * b)) + part(f, d, 2, 3) * (-a / (b * (a + b)));
      last = part(f, d, -3, -2) * (z / (y * (y + z))) + part(f, d, -2, -1) * (-(y + z) / (y * z)) +
             part(f, d, -1, 0) * ((2 * z + y) / (z * (y + z)));
    }
  }
  return cat({first, center, last}, d);
}

// The checked dims (all, by default) and one gradient per dim.
std::vector<Tensor> gradient_impl(const Tensor& self, const std::vector<Tensor>& coordinates,
                                  const std::vector<double>& spacings,
                                  std::optional<std::vector<int64_t>> dims, int64_t edge_order,
                                  bool one_for_all = false) {
  check_defined("gradient", self);
  BRASA_CHECK(edge_order == 1 || edge_order == 2,
              "torch.gradient only supports edge_order=1 and edge_order=2.");
  std::vector<int64_t> ds;
  if (dims) {
    for (int64_t dim : *dims) ds.push_back(maybe_wrap_dim(dim, self.dim(), "gradient"));
    for (size_t i = 0; i < ds.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        BRASA_CHECK(ds[i] != ds[j], "torch.gradient: dim ", ds[i], " appears multiple times in ",
                    "the list of dims");
  } else {
    for (int64_t k = 0; k < self.dim(); ++k) ds.push_back(k);
  }
  const size_t given = coordinates.empty() ? spacings.size() : coordinates.size();
  BRASA_CHECK((one_for_all && given == 1) || given == ds.size(),
              "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
              "dim arguments to have the same length, but got a spacing argument of length ",
              given, " and a dim argument of length ", ds.size(), ".");
  Tensor f = self.is_floating_point() ? self : self.to(kFloat);
  std::vector<Tensor> out;
  for (size_t i = 0; i < ds.size(); ++i) {
    const int64_t d = ds[i];
    BRASA_CHECK(self.size(d) >= edge_order + 1,
                "torch.gradient expected each dimension size to be at least edge_order+1, got ",
                "size ", self.size(d), " at dim ", d, " for edge_order ", edge_order);
    Tensor x;
    double h = 1;
    if (!coordinates.empty()) {
      x = coordinates[i];
      BRASA_CHECK(x.defined() && x.dim() == 1 && x.size(0) == self.size(d),
                  "torch.gradient expected each tensor to be on the same device and of size ",
                  self.size(d), " (the input's size along dim ", d, "), got ",
                  x.defined() ? x.sizes() : IntArrayRef{});
      BRASA_CHECK(x.device() == self.device(),
                  "torch.gradient expected each tensor to be on the same device, but got ",
                  x.device(), " and ", self.device());
    } else {
      h = spacings[one_for_all ? 0 : i];
    }
    out.push_back(gradient_along(f, d, x, h, edge_order));
  }
  return out;
}

std::vector<double> as_spacings(ArrayRef<Scalar> spacing) {
  std::vector<double> out;
  for (const Scalar& s : spacing) out.push_back(s.to<double>());
  return out;
}
std::optional<std::vector<int64_t>> one_dim(std::optional<int64_t> dim) {
  if (!dim) return std::nullopt;
  return std::vector<int64_t>{*dim};
}
}  // namespace

std::vector<Tensor> gradient(const Tensor& self, const std::optional<Scalar>& spacing,
                             std::optional<int64_t> dim, int64_t edge_order) {
  return gradient_impl(self, {}, {spacing ? spacing->to<double>() : 1.0}, one_dim(dim), edge_order,
                       true);
}
std::vector<Tensor> gradient(const Tensor& self, const Scalar& spacing, IntArrayRef dim,
                             int64_t edge_order) {
  return gradient_impl(self, {}, {spacing.to<double>()}, dim.vec(), edge_order, true);
}
std::vector<Tensor> gradient(const Tensor& self, IntArrayRef dim, int64_t edge_order) {
  return gradient_impl(self, {}, {1.0}, dim.vec(), edge_order, true);
}
std::vector<Tensor> gradient(const Tensor& self, ArrayRef<Scalar> spacing,
                             std::optional<int64_t> dim, int64_t edge_order) {
  return gradient_impl(self, {}, as_spacings(spacing), one_dim(dim), edge_order);
}
std::vector<Tensor> gradient(const Tensor& self, ArrayRef<Scalar> spacing, IntArrayRef dim,
                             int64_t edge_order) {
  return gradient_impl(self, {}, as_spacings(spacing), dim.vec(), edge_order);
}
std::vector<Tensor> gradient(const Tensor& self, TensorList spacing, std::optional<int64_t> dim,
                             int64_t edge_order) {
  return gradient_impl(self, spacing.vec(), {}, one_dim(dim), edge_order);
}
std::vector<Tensor> gradient(const Tensor& self, TensorList spacing, IntArrayRef dim,
                             int64_t edge_order) {
  return gradient_impl(self, spacing.vec(), {}, dim.vec(), edge_order);
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
