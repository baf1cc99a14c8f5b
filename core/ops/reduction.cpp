#include <brasa/autograd/record.h>
#include <brasa/autograd/view_grad.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/complex.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/indexing.h>
#include <brasa/ops/kernels/reduction.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/unary.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace brasa {
namespace {

RowPlan plan_rows(const char* op, const Tensor& x, IntArrayRef dims, bool keepdim) {
  BRASA_CHECK(x.defined(), op, ": expected a defined tensor");
  const int64_t nd = x.dim();
  std::vector<bool> reduce(std::max<int64_t>(nd, 1), dims.empty());
  for (auto d : dims) {
    int64_t w = maybe_wrap_dim(d, nd, op);
    BRASA_CHECK(!reduce[w], op, ": dim ", w, " appears multiple times in the list of dims");
    reduce[w] = true;
  }
  RowPlan p;
  DimVector perm;
  for (int64_t d = 0; d < nd; ++d)
    if (!reduce[d]) perm.push_back(d), p.K *= x.size(d);
  int64_t nkept = static_cast<int64_t>(perm.size());
  for (int64_t d = 0; d < nd; ++d)
    if (reduce[d]) perm.push_back(d), p.R *= x.size(d);
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduce[d])
      p.out_shape.push_back(x.size(d));
    else if (keepdim)
      p.out_shape.push_back(1);
  }
  bool leading = true;
  for (int64_t d = 0; d < nd; ++d) leading &= (d < nd - nkept) == reduce[d];
  if (leading && x.is_contiguous() && nkept > 0 && p.R > 1) {
    p.outer = true;
    p.rows = x.reshape({p.R, p.K});
    return p;
  }
  // Everything reduced, of a dense tensor in another order (channels-last, a
  // transpose): one row in memory order, no permuted copy first.
  if (p.K == 1 && !x.is_contiguous() && autograd::is_non_overlapping_and_dense(x)) {
    p.rows = x.as_strided({1, p.R}, {p.R, 1});
    return p;
  }
  // One block of reduced dims between kept ones of a contiguous CPU tensor
  // (the mean over the steps of [batch, steps, features]): the kernel reads
  // the columns where they lie (`inner`).
  int64_t first = 0, last = nd;
  while (first < nd && !reduce[first]) ++first;
  while (last > first && !reduce[last - 1]) --last;
  bool block = first > 0 && last < nd && p.R > 1;
  for (int64_t d = first; block && d < last; ++d) block = reduce[d];
  if (block && x.is_contiguous() && x.is_cpu()) {
    p.inner = 1;
    for (int64_t d = last; d < nd; ++d) p.inner *= x.size(d);
    p.rows = x.reshape({p.K / p.inner, p.R, p.inner});
    return p;
  }
  p.rows = contiguous(x.permute(perm).reshape({p.K, p.R}));
  return p;
}

// The rows of `p` reduced by `op` into a tensor of dtype out_t on their device.
Tensor reduce(const RowPlan& p, ScalarType out_t, RowReduction op, const ReduceOptions& o = {}) {
  Tensor out = empty({p.K}, p.rows.options().dtype(out_t));
  kernel<ReduceRowsKernel>(out.device())(p, out, op, o);
  return out.view(p.out_shape);
}

ScalarType sum_dtype(const Tensor& x, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return isIntegralType(x.dtype(), true) ? kLong : x.dtype();
}

// The reduced dims of a contiguous x when they are a leading block and a
// trailing block around kept ones (a per-channel sum of NCHW): {lead, trail},
// the first kept dim and the first trailing reduced one; else {0, 0}.
std::pair<int64_t, int64_t> outer_and_inner_blocks(const Tensor& x, IntArrayRef dims) {
  const int64_t nd = x.dim();
  if (dims.empty() || nd < 3 || !x.is_contiguous()) return {0, 0};
  std::vector<bool> reduced(nd, false);
  for (auto d : dims) reduced[maybe_wrap_dim(d, nd, "sum")] = true;
  int64_t lead = 0, trail = nd;
  while (lead < nd && reduced[lead]) ++lead;
  while (trail > lead && reduced[trail - 1]) --trail;
  for (int64_t d = lead; d < trail; ++d)
    if (reduced[d]) return {0, 0};
  if (lead == 0 || trail == nd || lead == trail) return {0, 0};
  return {lead, trail};
}

Tensor sum_impl(const char* op, const Tensor& xin, IntArrayRef dims, bool keepdim,
                ScalarType out_t) {
  // A bool mask summed on the CPU is counted where it lies (the kernel reads
  // its bytes); other inputs are converted to the result's dtype first.
  const bool count_mask = xin.dtype() == kBool && out_t == kLong && xin.is_cpu();
  Tensor x = xin.dtype() == out_t || count_mask ? xin : xin.to(out_t);
  // On CUDA, such a sum takes two passes that read x where it lies (its
  // trailing rows, then the leading columns of what is left) instead of a
  // permuted copy of x. Other devices keep the one pass (and the CPU's rounding).
  if (x.device().type() == kCUDA) {
    auto [lead, trail] = outer_and_inner_blocks(x, dims);
    if (lead > 0) {
      DimVector inner_dims, outer_dims;
      for (int64_t d = trail; d < x.dim(); ++d) inner_dims.push_back(d);
      for (int64_t d = 0; d < lead; ++d) outer_dims.push_back(d);
      Tensor rows = reduce(plan_rows(op, x, inner_dims, true), out_t, RowReduction::Sum);
      Tensor out = reduce(plan_rows(op, rows, outer_dims, true), out_t, RowReduction::Sum);
      if (keepdim) return out;
      DimVector kept(x.sizes().begin() + lead, x.sizes().begin() + trail);
      return out.reshape(kept);
    }
  }
  return reduce(plan_rows(op, x, dims, keepdim), out_t, RowReduction::Sum);
}

Tensor extreme_values(const char* op, const Tensor& x, IntArrayRef dims, bool keepdim,
                      bool is_max) {
  RowPlan p = plan_rows(op, x, dims, keepdim);
  BRASA_CHECK(p.R > 0 || x.numel() == 0, op, ": cannot reduce over a zero-size dimension");
  BRASA_CHECK(p.R > 0, op, ": expected reduction dim to have non-zero size (input shape ",
              x.sizes(), ")");
  return reduce(p, x.dtype(), is_max ? RowReduction::Max : RowReduction::Min);
}

std::tuple<Tensor, Tensor> extreme_dim(const char* op, const Tensor& x, int64_t dim, bool keepdim,
                                       bool is_max) {
  RowPlan p = plan_rows(op, x, {dim}, keepdim);
  BRASA_CHECK(p.R > 0, op, ": expected reduction dim ", dim, " to have non-zero size (input shape ",
              x.sizes(), ")");
  Tensor vals = empty({p.K}, x.options()), idx = empty({p.K}, x.options().dtype(kLong));
  kernel<ArgExtremeKernel>(x.device())(p, vals, idx, is_max);
  return {vals.view(p.out_shape), idx.view(p.out_shape)};
}

void check_floating(const char* op, const Tensor& x) {
  BRASA_CHECK(x.is_floating_point(), op, ": expected a floating point tensor as input, got ",
              x.dtype(), ". Convert it with .to(kFloat) first.");
}

Tensor var_impl(const Tensor& x, IntArrayRef dims, bool unbiased, bool keepdim, bool take_sqrt) {
  const char* op = take_sqrt ? "std" : "var";
  check_floating(op, x);
  RowPlan p = plan_rows(op, x, dims, keepdim);
  ReduceOptions o;
  o.unbiased = unbiased;
  return reduce(p, x.dtype(), take_sqrt ? RowReduction::Std : RowReduction::Var, o);
}

Tensor bool_reduce(const char* op, const Tensor& x, IntArrayRef dims, bool keepdim, bool is_all) {
  RowPlan p = plan_rows(op, x, dims, keepdim);
  ScalarType out_t = x.dtype() == kByte ? kByte : kBool;
  return reduce(p, out_t, is_all ? RowReduction::All : RowReduction::Any);
}

// Rows along `dim` (moved last, contiguous), transformed row by row into a new
// tensor of the same shape: softmax, log_softmax, cumsum, cumprod.
Tensor map_rows_along(const char* op, const Tensor& x, int64_t dim, ScalarType out_t, RowMap map) {
  int64_t d = maybe_wrap_dim(dim, x.dim(), op);
  Tensor xin = x.dtype() == out_t ? x : x.to(out_t);
  bool last = x.dim() == 0 || d == x.dim() - 1;
  if (!last && x.numel() > 0 && has_kernel<MapColumnsKernel>(x.device())) {
    int64_t inner = 1;
    for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
    const int64_t R = x.size(d), outer = x.numel() / (R * inner);
    Tensor in = contiguous(xin), out = empty(in.sizes(), in.options());
    kernel<MapColumnsKernel>(out.device())(in, out, outer, R, inner, map);
    return out;
  }
  Tensor moved = last ? contiguous(xin) : contiguous(movedim(xin, d, -1));
  int64_t R = x.dim() == 0 ? 1 : x.size(d);
  int64_t K = R == 0 ? 0 : moved.numel() / R;
  Tensor out = empty(moved.sizes(), moved.options());
  if (out.numel()) kernel<MapRowsKernel>(out.device())(moved, out, K, R, map);
  return last ? out : contiguous(movedim(out, -1, d));
}

Tensor softmax_impl(const char* op, const Tensor& x, int64_t dim, std::optional<ScalarType> dtype,
                    bool log) {
  ScalarType t = dtype.value_or(x.dtype());
  BRASA_CHECK(isFloatingType(t), op, ": expected a floating point tensor, got ", t);
  // Along a dim of one element the result is exp(x - x) (log: x - x): 1 (0),
  // and NaN where x is NaN or infinite, as the general path gives; two
  // elementwise ops instead of a run of one per column (1.2-2x libtorch).
  if (x.dim() > 0 && x.size(maybe_wrap_dim(dim, x.dim(), op)) == 1 && !x.is_complex()) {
    Tensor xt = x.to(t), zero = xt - xt;
    return log ? zero : zero + 1;
  }
  return map_rows_along(op, x, dim, t, log ? RowMap::LogSoftmax : RowMap::Softmax);
}

Tensor scan_impl(const char* op, const Tensor& x, int64_t dim, std::optional<ScalarType> dtype,
                 bool product) {
  ScalarType t = dtype ? *dtype : (isIntegralType(x.dtype(), true) ? kLong : x.dtype());
  return map_rows_along(op, x, dim, t, product ? RowMap::Cumprod : RowMap::Cumsum);
}

// ---- derivatives ----
using autograd::BackwardName;
using autograd::FormulaNode;
using autograd::variable_list;
// libtorch names the whole-tensor sum and mean ...Backward0, those over dims ...Backward1.
const BackwardName kSumAllBackward("SumBackward0"), kMeanAllBackward("MeanBackward0");
const BackwardName kSumBackward("SumBackward1"), kMeanBackward("MeanBackward1"),
    kProdBackward("ProdBackward1"), kMaxDimBackward("MaxBackward0"), kAmaxBackward("AmaxBackward0"),
    kVarBackward("VarBackward0"), kStdBackward("StdBackward0"), kNormBackward("NormBackward1"),
    kLogsumexpBackward("LogsumexpBackward0"), kSoftmaxBackward("SoftmaxBackward0"),
    kLogSoftmaxBackward("LogSoftmaxBackward0"), kCumsumBackward("CumsumBackward0"),
    kCumprodBackward("CumprodBackward0");

// The reduced dims of x, wrapped (empty list = all dims).
DimVector reduced_dims(const Tensor& x, IntArrayRef dims) {
  DimVector out;
  if (dims.empty()) {
    for (int64_t d = 0; d < x.dim(); ++d) out.push_back(d);
  } else {
    for (auto d : dims) out.push_back(maybe_wrap_dim(d, x.dim(), "reduction"));
    std::sort(out.begin(), out.end());
  }
  return out;
}

// Brings a reduced tensor back to x's shape (broadcast along reduced dims).
Tensor expand_back(const Tensor& g, IntArrayRef in_sizes, const DimVector& dims, bool keepdim) {
  Tensor r = g;
  if (!keepdim)
    for (auto d : dims) r = unsqueeze(r, d);
  return expand(r, in_sizes);
}

int64_t reduced_count(IntArrayRef in_sizes, const DimVector& dims) {
  int64_t n = 1;
  for (auto d : dims) n *= in_sizes[d];
  return n;
}

// Records a reduction out = f(x) over `dims` whose formula sees the
// gradient and output brought back to x's shape.
template <class F>
void record_reduction(autograd::Recorder& r, const Tensor& x, const Tensor& out, IntArrayRef dims,
                      bool keepdim, bool save_x, bool save_out, F formula) {
  if (!r) return;
  DimVector ds = reduced_dims(x, dims);
  DimVector in(x.sizes().begin(), x.sizes().end());
  r.save(save_x ? x : Tensor(), save_out ? out : Tensor());
  r.finish(out, [ds, in, keepdim, formula](FormulaNode& n, const variable_list& g) {
    Tensor x = n.saved(0), y = n.saved(1);
    Tensor ye = y.defined() ? expand_back(y, in, ds, keepdim) : Tensor();
    return variable_list{formula(expand_back(g[0], in, ds, keepdim), x, ye, ds)};
  });
}

Tensor sum_named(const BackwardName& name, const Tensor& x, IntArrayRef dim, bool keepdim,
                 std::optional<ScalarType> dtype) {
  if (x.defined() && x.is_complex())
    return detail::complex_sum("sum", x, dim, keepdim, dtype, false);
  autograd::Recorder r(name, x);
  Tensor out = sum_impl("sum", x, dim, keepdim, sum_dtype(x, dtype));
  record_reduction(
      r, x, out, dim, keepdim, false, false,
      [](const Tensor& g, const Tensor&, const Tensor&, const DimVector&) { return g; });
  return out;
}

Tensor mean_named(const BackwardName& name, const Tensor& x, IntArrayRef dim, bool keepdim,
                  std::optional<ScalarType> dtype) {
  if (x.defined() && x.is_complex())
    return detail::complex_sum("mean", x, dim, keepdim, dtype, true);
  ScalarType t = dtype.value_or(x.dtype());
  BRASA_CHECK(isFloatingType(t),
              "mean(): could not infer output dtype. Input dtype must be either a floating point "
              "or complex dtype. Got: ",
              t);
  autograd::Recorder r(name, x);
  Tensor s = sum_impl("mean", x, dim, keepdim, t);
  // The values averaged into each output: from the reduced dims' sizes, so
  // that an empty result (an empty batch) is still recorded for autograd.
  int64_t count = x.numel();
  if (!dim.empty()) {
    count = 1;
    std::vector<bool> reduced(static_cast<size_t>(std::max<int64_t>(x.dim(), 1)), false);
    for (int64_t d : dim) reduced[static_cast<size_t>(maybe_wrap_dim(d, x.dim(), "mean"))] = true;
    for (int64_t d = 0; d < x.dim(); ++d)
      if (reduced[static_cast<size_t>(d)]) count *= x.size(d);
  }
  Tensor out = div(s, static_cast<double>(count));
  if (r) {
    // Divided before it is expanded: the gradient stays a broadcast view of
    // the reduced shape, as sum's does, instead of a full-size quotient.
    DimVector ds = reduced_dims(x, dim);
    DimVector in(x.sizes().begin(), x.sizes().end());
    r.finish(out, [ds, in, keepdim, count](FormulaNode&, const variable_list& g) {
      return variable_list{expand_back(g[0] / static_cast<double>(count), in, ds, keepdim)};
    });
  }
  return out;
}
}  // namespace

Tensor sum(const Tensor& x, std::optional<ScalarType> dtype) {
  return sum_named(kSumAllBackward, x, {}, false, dtype);
}
Tensor sum(const Tensor& x, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return sum_named(kSumBackward, x, dim, keepdim, dtype);
}
Tensor mean(const Tensor& x, std::optional<ScalarType> dtype) {
  return mean_named(kMeanAllBackward, x, {}, false, dtype);
}
Tensor mean(const Tensor& x, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return mean_named(kMeanBackward, x, dim, keepdim, dtype);
}

Tensor prod(const Tensor& x, std::optional<ScalarType> dtype) {
  return prod(flatten(x), 0, false, dtype);
}
static Tensor prod_kernel(const Tensor& x, int64_t dim, bool keepdim,
                          std::optional<ScalarType> dtype);
// d prod / d x_i = product of the others: out / x_i without zeros; with
// zeros, the exclusive products from both sides (no division; differentiable
// again through cumprod's gradient, which handles zeros).
static Tensor prod_of_others(const Tensor& x, int64_t dim) {
  if (!eq(x, 0).any().item<bool>()) return prod(x, dim, true) / x;
  int64_t n = x.size(dim);
  Tensor ones_slice = ones_like(narrow(x, dim, 0, 1));
  Tensor left = cat({ones_slice, narrow(cumprod(x, dim), dim, 0, n - 1)}, dim);
  Tensor fx = flip(x, {dim});
  Tensor right = flip(cat({ones_slice, narrow(cumprod(fx, dim), dim, 0, n - 1)}, dim), {dim});
  return left * right;
}
Tensor prod(const Tensor& x, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  if (x.defined() && x.is_complex()) return detail::complex_prod(x, dim, keepdim, dtype);
  autograd::Recorder r(kProdBackward, x);
  Tensor out = prod_kernel(x, dim, keepdim, dtype);
  if (x.dim() > 0) {
    int64_t d = maybe_wrap_dim(dim, x.dim(), "prod");
    record_reduction(r, x, out, {d}, keepdim, true, false,
                     [d](const Tensor& g, const Tensor& xs, const Tensor&, const DimVector&) {
                       return g * prod_of_others(xs, d);
                     });
  } else if (r) {
    r.finish(out, [](FormulaNode&, const variable_list& g) { return variable_list{g[0]}; });
  }
  return out;
}
static Tensor prod_kernel(const Tensor& x, int64_t dim, bool keepdim,
                          std::optional<ScalarType> dtype) {
  ScalarType t = sum_dtype(x, dtype);
  Tensor xin = x.dtype() == t ? x : x.to(t);
  RowPlan p = plan_rows("prod", xin, {dim}, keepdim);
  if (x.dim() == 0) p.out_shape.clear();
  return reduce(p, t, RowReduction::Prod);
}

Tensor max(const Tensor& x) {
  BRASA_CHECK(x.numel() > 0,
              "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
              "reduction dim with the 'dim' argument.");
  return amax(x, {}, false);
}
Tensor min(const Tensor& x) {
  BRASA_CHECK(x.numel() > 0,
              "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
              "reduction dim with the 'dim' argument.");
  return amin(x, {}, false);
}
// The gradient goes to the element the index names.
static std::tuple<Tensor, Tensor> extreme_dim_ad(const char* op, const Tensor& x, int64_t dim,
                                                 bool keepdim, bool is_max) {
  autograd::Recorder r(kMaxDimBackward, x);
  auto [values, indices] = extreme_dim(op, x, dim, keepdim, is_max);
  if (r) {
    int64_t d = x.dim() == 0 ? 0 : maybe_wrap_dim(dim, x.dim(), op);
    DimVector in(x.sizes().begin(), x.sizes().end());
    r.save(indices).finish(std::vector<Tensor>{values, indices},
                           [d, in, keepdim](FormulaNode& n, const variable_list& g) {
                             if (in.empty()) return variable_list{g[0]};
                             Tensor idx = n.saved(0), gv = g[0];
                             if (!keepdim) idx = unsqueeze(idx, d), gv = unsqueeze(gv, d);
                             IndicesInRangeGuard made_by_the_kernel;
                             return variable_list{zeros(in, gv.options()).scatter(d, idx, gv)};
                           });
  }
  return {values, indices};
}
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_dim_ad("max", x, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_dim_ad("min", x, dim, keepdim, false);
}
Tensor max(const Tensor& a, const Tensor& b) { return maximum(a, b); }
Tensor min(const Tensor& a, const Tensor& b) { return minimum(a, b); }
// Ties share the gradient evenly (PyTorch's amax/amin and max()/min()).
static Tensor extreme_values_ad(const char* op, const Tensor& x, IntArrayRef dim, bool keepdim,
                                bool is_max) {
  autograd::Recorder r(kAmaxBackward, x);
  Tensor out = extreme_values(op, x, dim, keepdim, is_max);
  if (!r) return out;
  // Each output's gradient divided by its count of extremes at the reduced
  // size, then placed where x holds the extreme: three passes over x's size
  // (the comparison, the count, the placing) instead of five.
  DimVector ds = reduced_dims(x, dim), in(x.sizes().begin(), x.sizes().end());
  r.save(x, out);
  r.finish(out, [ds, in, keepdim](FormulaNode& n, const variable_list& g) {
    Tensor mask = eq(n.saved(0), expand_back(n.saved(1), in, ds, keepdim));
    Tensor share = g[0] / sum(mask, ds, keepdim).to(g[0].dtype());
    return variable_list{where(mask, expand_back(share, in, ds, keepdim), 0)};
  });
  return out;
}
Tensor amax(const Tensor& x, IntArrayRef dim, bool keepdim) {
  return extreme_values_ad("amax", x, dim, keepdim, true);
}
Tensor amin(const Tensor& x, IntArrayRef dim, bool keepdim) {
  return extreme_values_ad("amin", x, dim, keepdim, false);
}

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  BRASA_CHECK(x.numel() > 0,
              "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
  if (!dim) return std::get<1>(extreme_dim("argmax", flatten(x), 0, false, true));
  return std::get<1>(extreme_dim("argmax", x, *dim, keepdim, true));
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  BRASA_CHECK(x.numel() > 0,
              "argmin(): Expected reduction dim to be specified for input.numel() == 0.");
  if (!dim) return std::get<1>(extreme_dim("argmin", flatten(x), 0, false, false));
  return std::get<1>(extreme_dim("argmin", x, *dim, keepdim, false));
}

static Tensor var_ad(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim,
                     bool take_sqrt) {
  autograd::Recorder r(take_sqrt ? kStdBackward : kVarBackward, x);
  Tensor out = var_impl(x, dim, unbiased, keepdim, take_sqrt);
  record_reduction(r, x, out, dim, keepdim, true, take_sqrt,
                   [unbiased, take_sqrt](const Tensor& g, const Tensor& xs, const Tensor& ye,
                                         const DimVector& ds) {
                     double n = static_cast<double>(reduced_count(xs.sizes(), ds)) -
                                (unbiased ? 1.0 : 0.0);
                     Tensor centered = xs - mean(xs, ds, true);
                     return take_sqrt ? g * centered / (ye * n) : g * centered * (2.0 / n);
                   });
  return out;
}
Tensor var(const Tensor& x, bool unbiased) { return var_ad(x, {}, unbiased, false, false); }
Tensor var(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim) {
  return var_ad(x, dim, unbiased, keepdim, false);
}
Tensor std(const Tensor& x, bool unbiased) { return var_ad(x, {}, unbiased, false, true); }
Tensor std(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim) {
  return var_ad(x, dim, unbiased, keepdim, true);
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim) {
  return {var(x, dim, unbiased, keepdim), mean(x, dim, keepdim)};
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim) {
  return {std(x, dim, unbiased, keepdim), mean(x, dim, keepdim)};
}

Tensor norm(const Tensor& x, const Scalar& p) { return norm(x, p, {}, false); }
static Tensor norm_kernel(const Tensor& x, double p, IntArrayRef dim, bool keepdim);
Tensor norm(const Tensor& x, std::optional<Scalar> p_opt, IntArrayRef dim, bool keepdim) {
  check_floating("norm", x);
  double p = p_opt ? p_opt->toDouble() : 2.0;
  autograd::Recorder r(kNormBackward, x);
  Tensor out = norm_kernel(x, p, dim, keepdim);
  record_reduction(
      r, x, out, dim, keepdim, true, true,
      [p](const Tensor& g, const Tensor& xs, const Tensor& ye, const DimVector& ds) -> Tensor {
        Tensor zero = zeros_like(g);
        if (p == 0) return zero;
        if (p == 1) return g * sign(xs);
        if (std::isinf(p)) {
          Tensor mask = eq(abs(xs), ye).to(g.dtype());
          return g * sign(xs) * mask / sum(mask, ds, true);
        }
        Tensor scaled = p == 2 ? xs / ye : xs * pow(abs(xs), p - 2) / pow(ye, p - 1);
        return where(eq(ye, 0), zero, g * scaled);
      });
  return out;
}
static Tensor norm_kernel(const Tensor& x, double p, IntArrayRef dim, bool keepdim) {
  BRASA_CHECK(p >= 0 || std::isinf(p), "norm: p must be non-negative or +/-inf, got ", p);
  RowPlan plan = plan_rows("norm", x, dim, keepdim);
  ReduceOptions o;
  o.p = p;
  return reduce(plan, x.dtype(), RowReduction::Norm, o);
}

static Tensor logsumexp_kernel(const Tensor& x, IntArrayRef dim, bool keepdim);
Tensor logsumexp(const Tensor& x, IntArrayRef dim, bool keepdim) {
  autograd::Recorder r(kLogsumexpBackward, x);
  Tensor out = logsumexp_kernel(x, dim, keepdim);
  record_reduction(r, x, out, dim, keepdim, true, true,
                   [](const Tensor& g, const Tensor& xs, const Tensor& ye, const DimVector&) {
                     return g * exp(xs - ye);
                   });
  return out;
}
static Tensor logsumexp_kernel(const Tensor& x, IntArrayRef dim, bool keepdim) {
  Tensor xf = isIntegralType(x.dtype(), true) ? x.to(get_default_dtype()) : x;
  RowPlan p = plan_rows("logsumexp", xf, dim, keepdim);
  return reduce(p, xf.dtype(), RowReduction::Logsumexp);
}

Tensor all(const Tensor& x) { return bool_reduce("all", x, {}, false, true); }
Tensor all(const Tensor& x, int64_t dim, bool keepdim) {
  return bool_reduce("all", x, {dim}, keepdim, true);
}
Tensor any(const Tensor& x) { return bool_reduce("any", x, {}, false, false); }
Tensor any(const Tensor& x, int64_t dim, bool keepdim) {
  return bool_reduce("any", x, {dim}, keepdim, false);
}
Tensor count_nonzero(const Tensor& x, std::optional<int64_t> dim) {
  // A mask is its own test (comparing it with the integer 0 promoted it to
  // int64 first: 174 us for 1 Mi elements, 33 us counted where it lies).
  Tensor nz = x.dtype() == kBool ? x : ne(x, 0);
  return dim ? sum(nz, {*dim}) : sum(nz);
}

// The gradient of softmax (log: log_softmax) along d from the op's output y
// and the incoming gradient g: one fused pass where the device has the
// kernel and no graph of the gradient is being built; the formula otherwise
// (double backward, devices without it).
static Tensor softmax_backward(const Tensor& g, const Tensor& y, int64_t d, bool log) {
  if (y.dim() > 0 && y.numel() > 0 && !autograd::GradMode::is_enabled() && g.dtype() == y.dtype() &&
      g.device() == y.device() && g.sizes() == y.sizes() &&
      has_kernel<SoftmaxBackwardKernel>(y.device())) {
    int64_t inner = 1;
    for (int64_t i = d + 1; i < y.dim(); ++i) inner *= y.size(i);
    const int64_t R = y.size(d), outer = y.numel() / (R * inner);
    Tensor gc = contiguous(g), yc = contiguous(y), gx = empty(yc.sizes(), yc.options());
    kernel<SoftmaxBackwardKernel>(y.device())(gc, yc, gx, outer, R, inner, log);
    return gx;
  }
  if (log) return g - exp(y) * (y.dim() == 0 ? g : sum(g, {d}, true));
  Tensor gy = g * y;
  return gy - y * (y.dim() == 0 ? gy : sum(gy, {d}, true));
}

Tensor softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  autograd::Recorder r(kSoftmaxBackward, x);
  Tensor y = softmax_impl("softmax", x, dim, dtype, false);
  if (r) {
    int64_t d = x.dim() == 0 ? 0 : maybe_wrap_dim(dim, x.dim(), "softmax");
    r.save(y).finish(y, [d](FormulaNode& n, const variable_list& g) {
      return variable_list{softmax_backward(g[0], n.saved(0), d, false)};
    });
  }
  return y;
}
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  autograd::Recorder r(kLogSoftmaxBackward, x);
  Tensor y = softmax_impl("log_softmax", x, dim, dtype, true);
  if (r) {
    int64_t d = x.dim() == 0 ? 0 : maybe_wrap_dim(dim, x.dim(), "log_softmax");
    r.save(y).finish(y, [d](FormulaNode& n, const variable_list& g) {
      return variable_list{softmax_backward(g[0], n.saved(0), d, true)};
    });
  }
  return y;
}

// Sum from the end: flip, cumsum, flip.
static Tensor reverse_cumsum(const Tensor& g, int64_t d) {
  return flip(cumsum(flip(g, {d}), d), {d});
}

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  autograd::Recorder r(kCumsumBackward, x);
  Tensor y = scan_impl("cumsum", x, dim, dtype, false);
  if (r) {
    int64_t d = x.dim() == 0 ? 0 : maybe_wrap_dim(dim, x.dim(), "cumsum");
    r.finish(y, [d](FormulaNode&, const variable_list& g) {
      return variable_list{g[0].dim() == 0 ? g[0] : reverse_cumsum(g[0], d)};
    });
  }
  return y;
}
// The gradient of cumprod along d where x may hold zeros. Along each line,
// with z the first zero: before z, dL/dx_i = sum_{j>=i} g_j y_j / x_i as
// without zeros; at z, dL/dx_z = (prod_{k<z} x_k) * sum_{j>=z} g_j
// prod_{z<k<=j} x_k; after z every product holds x_z, so the gradient is 0.
// Its masks make it first-order only: see cumprod_backward_differentiable.
static Tensor cumprod_backward_with_zeros(const Tensor& g, const Tensor& x, const Tensor& y,
                                          int64_t d) {
  Tensor zero = eq(x, 0);
  Tensor zeros_so_far = cumsum(zero, d);
  Tensor before = eq(zeros_so_far, 0);
  Tensor first_zero = logical_and(zero, eq(zeros_so_far, 1));
  Tensor before_grad = reverse_cumsum(g * y, d) / where(before, x, 1.0);
  // The products after the first zero (1 up to it), and the product before it.
  Tensor after = cumprod(where(logical_or(before, first_zero), 1.0, x), d);
  Tensor prefix = prod(where(before, x, 1.0), d, true);
  Tensor at_zero_grad = prefix * reverse_cumsum(g * after, d);
  return where(before, before_grad, where(first_zero, at_zero_grad, 0.0));
}

// The same gradient when it is itself differentiated (create_graph): after
// the first zero the gradient is 0 but its derivative with respect to that
// zero is not, so each position is built from the products of the others,
// dL/dx_i = (prod_{k<i} x_k) * sum_{j>=i} g_j prod_{i<k<=j} x_k, as PyTorch
// does: O(n^2) along d, taken only for inputs with zeros.
static Tensor cumprod_backward_differentiable(const Tensor& g, const Tensor& x, int64_t d) {
  const int64_t n = x.size(d);
  Tensor prefix = cumprod(x, d);
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < n; ++i) {
    Tensor s = narrow(g, d, i, 1);
    if (i + 1 < n)
      s = s + sum(narrow(g, d, i + 1, n - i - 1) * cumprod(narrow(x, d, i + 1, n - i - 1), d), {d},
                  true);
    parts.push_back(i == 0 ? s : narrow(prefix, d, i - 1, 1) * s);
  }
  return cat(parts, d);
}

Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  autograd::Recorder r(kCumprodBackward, x);
  Tensor y = scan_impl("cumprod", x, dim, dtype, true);
  if (r) {
    int64_t d = x.dim() == 0 ? 0 : maybe_wrap_dim(dim, x.dim(), "cumprod");
    r.save(x, y).finish(y, [d](FormulaNode& n, const variable_list& g) {
      Tensor xs = n.saved(0), ys = n.saved(1);
      if (xs.dim() == 0) return variable_list{g[0]};
      // dy_j/dx_i = y_j / x_i for j >= i when no x is zero.
      if (!eq(xs, 0).any().item<bool>()) return variable_list{reverse_cumsum(g[0] * ys, d) / xs};
      if (autograd::GradMode::is_enabled())
        return variable_list{cumprod_backward_differentiable(g[0], xs, d)};
      return variable_list{cumprod_backward_with_zeros(g[0], xs, ys, d)};
    });
  }
  return y;
}

}  // namespace brasa
