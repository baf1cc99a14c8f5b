#include <brasa/autograd/record.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/counting.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace brasa {

namespace {

bool is_integral(ScalarType t) {
  return t == kByte || t == kChar || t == kShort || t == kInt || t == kLong;
}

// The elements of a tensor (on any device) as doubles, in row-major order:
// these ops count and search on the host.
std::vector<double> as_doubles(const Tensor& t) {
  Tensor d = t.to(Device(kCPU), kDouble).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

// Runs fn(values, n, out_index) over every slice along `dim` (values of one
// slice, contiguous) and gathers the chosen indices into a tensor shaped like
// self with dim removed (or kept as 1); returns (values, indices).
template <class Pick>
std::tuple<Tensor, Tensor> pick_along(const Tensor& self, int64_t dim, bool keepdim, const char* op,
                                      Pick pick) {
  const int64_t d = maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1), op);
  Tensor x = self.dim() == 0 ? self.reshape({1}) : self;
  const int64_t n = x.size(d);
  BRASA_CHECK(n > 0, op, "(): Expected reduction dim ", d, " to have non-zero size.");
  Tensor moved = x.movedim(d, -1);
  std::vector<double> v = as_doubles(moved);
  const int64_t slices = moved.numel() / n;
  std::vector<int64_t> chosen(static_cast<size_t>(slices));
  for (int64_t s = 0; s < slices; ++s) chosen[s] = pick(v.data() + s * n, n);
  std::vector<int64_t> shape = moved.sizes().vec();
  shape.back() = 1;
  Tensor idx =
      tensor(chosen, TensorOptions().dtype(kLong).device(x.device())).view(shape).movedim(-1, d);
  Tensor values = x.gather(d, idx);  // differentiable: the chosen elements
  if (!keepdim || self.dim() == 0) {
    values = values.squeeze(d);
    idx = idx.squeeze(d);
  }
  return {values, idx};
}

// The position of the lower median of v[0..n): NaN first if there is one.
int64_t lower_median(const double* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (std::isnan(v[i])) return i;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return v[a] < v[b]; });
  return order[static_cast<size_t>((n - 1) / 2)];
}

// Where x goes in the sorted `seq` of length n (read in the order of
// `sorter` when given): the first place not below it (left) or above it (right).
int64_t insertion_point(const double* seq, int64_t n, const int64_t* sorter, double x, bool right) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    const double s = seq[sorter ? sorter[mid] : mid];
    if (right ? !(x < s) : s < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace

Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  BRASA_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs, got ",
              self.dim(), "-d");
  BRASA_CHECK(is_integral(self.scalar_type()),
              "bincount only supports 1-d non-negative integral inputs, got ", self.scalar_type());
  BRASA_CHECK(minlength >= 0, "bincount: minlength should be >= 0");
  BRASA_CHECK(!weights || (weights->dim() == 1 && weights->numel() == self.numel()),
              "bincount: weights should be 1-d and have the same length as input");
  Tensor x = self.to(Device(kCPU), kLong).contiguous();  // counted on the host
  const int64_t* p = x.data_ptr<int64_t>();
  int64_t top = -1;
  for (int64_t i = 0; i < x.numel(); ++i) {
    BRASA_CHECK(p[i] >= 0, "bincount only supports 1-d non-negative integral inputs, got ", p[i]);
    top = std::max(top, p[i]);
  }
  const int64_t bins = std::max(top + 1, minlength);
  if (!weights) {
    std::vector<int64_t> counts(static_cast<size_t>(bins), 0);
    for (int64_t i = 0; i < x.numel(); ++i) ++counts[p[i]];
    return tensor(counts, TensorOptions().dtype(kLong).device(self.device()));
  }
  // As PyTorch: float weights give float sums, any other weights double sums.
  const ScalarType out = weights->scalar_type() == kFloat ? kFloat : kDouble;
  std::vector<double> w = as_doubles(*weights), sums(static_cast<size_t>(bins), 0.0);
  for (int64_t i = 0; i < x.numel(); ++i) sums[p[i]] += w[i];
  return tensor(sums, TensorOptions().dtype(kDouble)).to(self.device(), out);
}

Tensor histc(const Tensor& self, int64_t bins, double min, double max) {
  BRASA_CHECK(self.is_floating_point(), "histc: expected a floating-point input, got ",
              self.scalar_type());
  BRASA_CHECK(bins > 0, "histc: bins must be > 0, but got ", bins);
  std::vector<double> v = as_doubles(self);
  if (min == max && !v.empty()) {
    min = INFINITY, max = -INFINITY;
    for (double x : v)
      if (!std::isnan(x)) min = std::min(min, x), max = std::max(max, x);
  }
  if (min == max) min -= 1, max += 1;
  BRASA_CHECK(min < max && std::isfinite(min) && std::isfinite(max), "histc: range of [", min, ", ",
              max, "] is not finite or min > max");
  std::vector<double> counts(static_cast<size_t>(bins), 0.0);
  for (double x : v) {
    if (!(x >= min && x <= max)) continue;
    auto b = static_cast<int64_t>((x - min) * static_cast<double>(bins) / (max - min));
    counts[std::min(b, bins - 1)] += 1;
  }
  return tensor(counts, TensorOptions().dtype(kDouble)).to(self.device(), self.scalar_type());
}

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                    const std::optional<std::string>& side, const std::optional<Tensor>& sorter) {
  if (side) {
    BRASA_CHECK(*side == "left" || *side == "right",
                "torch.searchsorted(): side can only be 'left' or 'right' but got ", *side);
    BRASA_CHECK(!(right && *side == "left"),
                "torch.searchsorted(): side and right can't be set to opposites, got side of ",
                *side, " while right was True");
    right = *side == "right";
  }
  BRASA_CHECK(sorted_sequence.dim() >= 1,
              "torch.searchsorted(): boundaries tensor should have at least 1 dimension");
  const bool shared = sorted_sequence.dim() == 1;
  if (!shared) {
    std::vector<int64_t> a(sorted_sequence.sizes().begin(), sorted_sequence.sizes().end() - 1);
    std::vector<int64_t> b(self.sizes().begin(), self.sizes().end() - (self.dim() ? 1 : 0));
    BRASA_CHECK(self.dim() == sorted_sequence.dim() && a == b,
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                "dimensions of boundaries tensor and input value tensor must match, but we got "
                "boundaries tensor ",
                sorted_sequence.sizes(), " and input value tensor ", self.sizes());
  }
  const int64_t n = sorted_sequence.size(-1);
  std::vector<double> seq = as_doubles(sorted_sequence), v = as_doubles(self);
  std::vector<int64_t> order;
  if (sorter) {
    BRASA_CHECK(
        sorter->sizes().vec() == sorted_sequence.sizes().vec() && sorter->scalar_type() == kLong,
        "torch.searchsorted(): sorter must be a long tensor of the boundaries' shape ",
        sorted_sequence.sizes(), ", got ", sorter->sizes());
    Tensor s = sorter->to(Device(kCPU)).contiguous();
    order.assign(s.data_ptr<int64_t>(), s.data_ptr<int64_t>() + s.numel());
    for (int64_t o : order)
      BRASA_CHECK(o >= 0 && o < n, "torch.searchsorted(): sorter index out of range: ", o);
  }
  const int64_t inner = self.dim() ? self.size(-1) : 1;
  std::vector<int64_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t row = shared ? 0 : static_cast<int64_t>(i) / inner;
    out[i] = insertion_point(seq.data() + row * n, n,
                             order.empty() ? nullptr : order.data() + row * n, v[i], right);
  }
  return tensor(out, TensorOptions().dtype(kLong))
      .view(self.sizes())
      .to(self.device(), out_int32 ? kInt : kLong);
}

Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                    const std::optional<std::string>& side, const std::optional<Tensor>& sorter) {
  BRASA_CHECK(sorted_sequence.dim() == 1,
              "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
              "dimension is 1, but we got boundaries tensor dim(",
              sorted_sequence.dim(), ")");
  return searchsorted(sorted_sequence, full({}, self, TensorOptions().dtype(kDouble)), out_int32,
                      right, side, sorter);
}

Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  BRASA_CHECK(boundaries.dim() == 1,
              "bucketize: boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(),
              ")");
  return searchsorted(boundaries, self, out_int32, right);
}

Tensor median(const Tensor& self) {
  BRASA_CHECK(self.numel() > 0, "median() input tensor cannot be empty");
  return std::get<0>(median(self.reshape({-1}), 0, false));
}

std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim) {
  return pick_along(self, dim, keepdim, "median", lower_median);
}

Tensor nanmedian(const Tensor& self) {
  BRASA_CHECK(self.numel() > 0, "nanmedian() input tensor cannot be empty");
  return std::get<0>(nanmedian(self.reshape({-1}), 0, false));
}

std::tuple<Tensor, Tensor> nanmedian(const Tensor& self, int64_t dim, bool keepdim) {
  return pick_along(self, dim, keepdim, "nanmedian", [](const double* v, int64_t n) {
    std::vector<int64_t> order;
    for (int64_t i = 0; i < n; ++i)
      if (!std::isnan(v[i])) order.push_back(i);
    if (order.empty()) return int64_t(0);  // all NaN
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return v[a] < v[b]; });
    return order[(order.size() - 1) / 2];
  });
}

namespace {
// Running extreme along dim: the index of the value each position holds.
std::tuple<Tensor, Tensor> running_extreme(const Tensor& self, int64_t dim, const char* op,
                                           bool maximum) {
  BRASA_CHECK(self.defined(), op, ": expected a defined tensor");
  const int64_t d = maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1), op);
  Tensor x = self.dim() == 0 ? self.reshape({1}) : self;
  if (x.numel() == 0)
    return {x.clone(), empty(x.sizes(), TensorOptions().dtype(kLong).device(x.device()))};
  Tensor moved = x.movedim(d, -1);
  const int64_t n = moved.size(-1), slices = moved.numel() / n;
  std::vector<double> v = as_doubles(moved);
  std::vector<int64_t> at(static_cast<size_t>(slices * n));
  for (int64_t s = 0; s < slices; ++s) {
    int64_t best = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double b = v[s * n + best], c = v[s * n + i];
      // Ties move to the later index; a NaN, once reached, stays (the latest NaN).
      if (i == 0 || std::isnan(c) || (maximum ? c >= b : c <= b)) best = i;
      at[s * n + i] = best;
    }
  }
  Tensor idx = tensor(at, TensorOptions().dtype(kLong).device(x.device()))
                   .view(moved.sizes())
                   .movedim(-1, d);
  Tensor values = x.gather(d, idx);
  if (self.dim() == 0) return {values.reshape({}), idx.reshape({})};
  return {values, idx};
}
}  // namespace

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) {
  return running_extreme(self, dim, "cummax", true);
}
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) {
  return running_extreme(self, dim, "cummin", false);
}

namespace {
const autograd::BackwardName kLogcumsumexpBackward("LogcumsumexpBackward0");

double log_add_exp(double a, double b) {
  const double hi = std::max(a, b), lo = std::min(a, b);
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (lo == -std::numeric_limits<double>::infinity() || hi == lo) {
    return hi == lo && std::isfinite(hi) ? hi + std::log(2.0) : hi;
  }
  return hi + std::log1p(std::exp(lo - hi));
}

// logcumsumexp along the last dim of a contiguous double tensor, in place.
void running_log_add_exp(Tensor& t) {
  const int64_t n = t.size(-1), slices = t.numel() / std::max<int64_t>(n, 1);
  double* p = t.data_ptr<double>();
  for (int64_t s = 0; s < slices; ++s)
    for (int64_t i = 1; i < n; ++i) p[s * n + i] = log_add_exp(p[s * n + i - 1], p[s * n + i]);
}

Tensor reverse_logcumsumexp(const Tensor& x, int64_t dim) {
  return logcumsumexp(x.flip({dim}), dim).flip({dim});
}
}  // namespace

Tensor logcumsumexp(const Tensor& self, int64_t dim) {
  BRASA_CHECK(self.defined(), "logcumsumexp: expected a defined tensor");
  BRASA_CHECK(self.is_floating_point(), "logcumsumexp(): expected a floating-point tensor, got ",
              self.scalar_type());
  const int64_t d = maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1), "logcumsumexp");
  autograd::Recorder r(kLogcumsumexpBackward, self);
  Tensor x = self.dim() == 0 ? self.reshape({1}) : self;
  // A copy: to() and contiguous() may return x's own storage, written below.
  Tensor moved = x.detach().to(Device(kCPU), kDouble).movedim(d, -1).contiguous().clone();
  if (moved.numel() > 0) running_log_add_exp(moved);
  Tensor out = moved.movedim(-1, d).to(self.scalar_type()).to(self.device()).reshape(self.sizes());
  if (r)
    r.save(self, out).finish(out, [d](autograd::FormulaNode& n, const autograd::variable_list& g) {
      // d out_i / d x_j = exp(x_j - out_i) for j <= i: the gradient is
      // exp(x_j) * sum_{i >= j} g_i exp(-out_i), summed in log space (the
      // positive and negative parts of g apart) so that nothing overflows.
      Tensor x = n.saved(0), out = n.saved(1), grad = g[0];
      if (x.dim() == 0) return autograd::variable_list{grad};
      const double lowest = std::numeric_limits<double>::lowest();
      Tensor log_abs = grad.abs().log();
      Tensor positive = where(grad > 0, log_abs, lowest);
      Tensor negative = where(grad < 0, log_abs, lowest);
      return autograd::variable_list{(reverse_logcumsumexp(positive - out, d) + x).exp() -
                                     (reverse_logcumsumexp(negative - out, d) + x).exp()};
    });
  return out;
}

std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim, bool keepdim) {
  return pick_along(self, dim, keepdim, "mode", [](const double* v, int64_t n) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return v[a] < v[b]; });
    // The longest run of equal values (the first, i.e. smallest, among ties);
    // its last occurrence in the input, as PyTorch reports.
    int64_t best = order[0], best_count = 0;
    for (int64_t i = 0; i < n;) {
      int64_t j = i, last = order[i];
      while (j < n && v[order[j]] == v[order[i]]) last = std::max(last, order[j++]);
      if (j - i > best_count) best_count = j - i, best = last;
      i = std::max(j, i + 1);
    }
    return best;
  });
}

}  // namespace brasa
