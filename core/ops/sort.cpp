#include <brasa/autograd/record.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/sort.h>
#include <brasa/util/parallel.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace brasa {
namespace {

// Strict weak order with NaN greater than everything.
template <class M>
bool less_nan_last(M a, M b) {
  if (b != b) return a == a;
  return a < b;
}

// Sorts each row along `dim` and keeps the first k of every row.
std::tuple<Tensor, Tensor> sort_rows(const char* op, const Tensor& x, int64_t dim, bool descending, int64_t k,
                                     bool stable) {
  int64_t d = maybe_wrap_dim(dim, x.dim(), op);
  bool scalar = x.dim() == 0;
  Tensor moved = scalar ? x.reshape({1}) : contiguous(movedim(x, d, -1));
  int64_t R = scalar ? 1 : x.size(d);
  BRASA_CHECK(k >= 0 && k <= R, op, ": k (", k, ") out of range for dimension of size ", R);
  int64_t K = R == 0 ? 0 : moved.numel() / R;
  DimVector out_shape(moved.sizes().begin(), moved.sizes().end());
  out_shape.back() = k;
  Tensor vals = empty(out_shape, x.options()), idx = empty(out_shape, TensorOptions().dtype(kLong));
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(x.dtype(), op, [&] {
    using M = opmath_t<scalar_t>;
    const scalar_t* in = moved.data_ptr<scalar_t>();
    scalar_t* v = vals.data_ptr<scalar_t>();
    int64_t* ix = idx.data_ptr<int64_t>();
    parallel_for(0, K, std::max<int64_t>(1, 4096 / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
      std::vector<int64_t> order(R);
      for (int64_t row = b; row < e; ++row) {
        const scalar_t* r = in + row * R;
        std::iota(order.begin(), order.end(), 0);
        auto cmp = [&](int64_t i, int64_t j) {
          return descending ? less_nan_last<M>(M(r[j]), M(r[i])) : less_nan_last<M>(M(r[i]), M(r[j]));
        };
        if (k < R && !stable) std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
        else if (stable) std::stable_sort(order.begin(), order.end(), cmp);
        else std::sort(order.begin(), order.end(), cmp);
        for (int64_t i = 0; i < k; ++i) {
          ix[row * k + i] = order[i];
          v[row * k + i] = r[order[i]];
        }
      }
    });
  });
  if (scalar) return {vals.reshape({}), idx.reshape({})};
  return {contiguous(movedim(vals, -1, d)), contiguous(movedim(idx, -1, d))};
}

const autograd::BackwardName kSortBackward("SortBackward0");

// Values get their gradient back at the positions their indices name.
std::tuple<Tensor, Tensor> sort_rows_ad(const char* op, const Tensor& x, int64_t dim, bool descending, int64_t k,
                                        bool stable) {
  autograd::Recorder r(kSortBackward, x);
  auto [vals, idx] = sort_rows(op, x, dim, descending, k, stable);
  if (r) {
    int64_t d = x.dim() == 0 ? 0 : maybe_wrap_dim(dim, x.dim(), op);
    DimVector in(x.sizes().begin(), x.sizes().end());
    r.save(idx).finish(std::vector<Tensor>{vals, idx},
                       [d, in](autograd::FormulaNode& n, const autograd::variable_list& g) {
                         if (in.empty()) return autograd::variable_list{g[0]};
                         return autograd::variable_list{zeros(in, g[0].options()).scatter(d, n.saved(0), g[0])};
                       });
  }
  return {vals, idx};
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  return sort_rows_ad("sort", x, dim, descending, x.dim() == 0 ? 1 : x.size(maybe_wrap_dim(dim, x.dim(), "sort")), true);
}
std::tuple<Tensor, Tensor> sort(const Tensor& x, std::optional<bool> stable, int64_t dim, bool descending) {
  return sort_rows_ad("sort", x, dim, descending, x.dim() == 0 ? 1 : x.size(maybe_wrap_dim(dim, x.dim(), "sort")), stable.value_or(false));
}
Tensor argsort(const Tensor& x, int64_t dim, bool descending) { return std::get<1>(sort(x, dim, descending)); }
Tensor msort(const Tensor& x) { return std::get<0>(sort(x, 0)); }

std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  return sort_rows_ad("topk", x, dim, largest, k, false);
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  int64_t d = maybe_wrap_dim(dim, x.dim(), "kthvalue");
  int64_t n = x.dim() == 0 ? 1 : x.size(d);
  BRASA_CHECK(k >= 1 && k <= n, "kthvalue: selected number k (", k, ") out of range for dimension of size ", n);
  auto [v, i] = sort_rows_ad("kthvalue", x, d, false, k, true);
  if (x.dim() == 0) return {v, i};
  Tensor vv = select(v, d, k - 1), ii = select(i, d, k - 1);
  if (keepdim) vv = unsqueeze(vv, d), ii = unsqueeze(ii, d);
  return {contiguous(vv), contiguous(ii)};
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted, bool return_inverse, bool return_counts) {
  Tensor flat = contiguous(x).reshape({-1});
  int64_t n = flat.numel();
  Tensor values, inverse = empty({0}, TensorOptions().dtype(kLong)), counts = empty({0}, TensorOptions().dtype(kLong));
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(x.dtype(), "unique", [&] {
    using M = opmath_t<scalar_t>;
    const scalar_t* p = flat.data_ptr<scalar_t>();
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return less_nan_last<M>(M(p[i]), M(p[j])); });
    std::vector<int64_t> group(n);
    std::vector<scalar_t> uniq;
    std::vector<int64_t> cnt;
    for (int64_t t = 0; t < n; ++t) {
      M cur = p[order[t]];
      bool same = t > 0 && (M(uniq.back()) == cur);
      if (!same) uniq.push_back(p[order[t]]), cnt.push_back(0);
      group[order[t]] = static_cast<int64_t>(uniq.size()) - 1;
      ++cnt.back();
    }
    int64_t u = static_cast<int64_t>(uniq.size());
    values = empty({u}, x.options());
    std::copy(uniq.begin(), uniq.end(), values.data_ptr<scalar_t>());
    if (return_inverse) {
      inverse = empty(x.sizes(), TensorOptions().dtype(kLong));
      std::copy(group.begin(), group.end(), inverse.data_ptr<int64_t>());
    }
    if (return_counts) {
      counts = empty({u}, TensorOptions().dtype(kLong));
      std::copy(cnt.begin(), cnt.end(), counts.data_ptr<int64_t>());
    }
  });
  return {values, inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& x, bool sorted, bool return_inverse, bool return_counts) {
  return unique(x, sorted, return_inverse, return_counts);
}

}  // namespace brasa
