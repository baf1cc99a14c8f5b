#include <brasa/autograd/record.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/sort.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/indexing.h>
#include <brasa/ops/kernels/sort.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace brasa {
namespace {

// Sorts each row along `dim` and keeps the first k of every row.
std::tuple<Tensor, Tensor> sort_rows(const char* op, const Tensor& x, int64_t dim, bool descending,
                                     int64_t k, bool stable) {
  int64_t d = maybe_wrap_dim(dim, x.dim(), op);
  bool scalar = x.dim() == 0;
  Tensor moved = scalar ? x.reshape({1}) : contiguous(movedim(x, d, -1));
  int64_t R = scalar ? 1 : x.size(d);
  BRASA_CHECK(k >= 0 && k <= R, op, ": k (", k, ") out of range for dimension of size ", R);
  int64_t K = R == 0 ? 0 : moved.numel() / R;
  DimVector out_shape(moved.sizes().begin(), moved.sizes().end());
  out_shape.back() = k;
  Tensor vals = empty(out_shape, x.options()), idx = empty(out_shape, x.options().dtype(kLong));
  if (K > 0 && k > 0)
    kernel<SortRowsKernel>(x.device())(moved.view({K, R}), vals.view({K, k}), idx.view({K, k}),
                                       descending, stable);
  if (scalar) return {vals.reshape({}), idx.reshape({})};
  return {contiguous(movedim(vals, -1, d)), contiguous(movedim(idx, -1, d))};
}

const autograd::BackwardName kSortBackward("SortBackward0");

// Values get their gradient back at the positions their indices name.
std::tuple<Tensor, Tensor> sort_rows_ad(const char* op, const Tensor& x, int64_t dim,
                                        bool descending, int64_t k, bool stable) {
  autograd::Recorder r(kSortBackward, x);
  auto [vals, idx] = sort_rows(op, x, dim, descending, k, stable);
  if (r) {
    int64_t d = x.dim() == 0 ? 0 : maybe_wrap_dim(dim, x.dim(), op);
    DimVector in(x.sizes().begin(), x.sizes().end());
    r.save(idx).finish(std::vector<Tensor>{vals, idx}, [d, in](autograd::FormulaNode& n,
                                                               const autograd::variable_list& g) {
      if (in.empty()) return autograd::variable_list{g[0]};
      IndicesInRangeGuard made_by_the_sort;
      return autograd::variable_list{zeros(in, g[0].options()).scatter(d, n.saved(0), g[0])};
    });
  }
  return {vals, idx};
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  return sort_rows_ad("sort", x, dim, descending,
                      x.dim() == 0 ? 1 : x.size(maybe_wrap_dim(dim, x.dim(), "sort")), true);
}
std::tuple<Tensor, Tensor> sort(const Tensor& x, std::optional<bool> stable, int64_t dim,
                                bool descending) {
  return sort_rows_ad("sort", x, dim, descending,
                      x.dim() == 0 ? 1 : x.size(maybe_wrap_dim(dim, x.dim(), "sort")),
                      stable.value_or(false));
}
Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  return std::get<1>(sort(x, dim, descending));
}
Tensor msort(const Tensor& x) { return std::get<0>(sort(x, 0)); }

std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
  return sort_rows_ad("topk", x, dim, largest, k, false);
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  int64_t d = maybe_wrap_dim(dim, x.dim(), "kthvalue");
  int64_t n = x.dim() == 0 ? 1 : x.size(d);
  BRASA_CHECK(k >= 1 && k <= n, "kthvalue: selected number k (", k,
              ") out of range for dimension of size ", n);
  auto [v, i] = sort_rows_ad("kthvalue", x, d, false, k, true);
  if (x.dim() == 0) return {v, i};
  Tensor vv = select(v, d, k - 1), ii = select(i, d, k - 1);
  if (keepdim) vv = unsqueeze(vv, d), ii = unsqueeze(ii, d);
  return {contiguous(vv), contiguous(ii)};
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted, bool return_inverse,
                                          bool return_counts) {
  Tensor flat = contiguous(x).reshape({-1});
  return kernel<UniqueKernel>(x.device())(flat, x.sizes(), return_inverse, return_counts);
}

std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& x, bool sorted, bool return_inverse,
                                            bool return_counts) {
  return unique(x, sorted, return_inverse, return_counts);
}

}  // namespace brasa
