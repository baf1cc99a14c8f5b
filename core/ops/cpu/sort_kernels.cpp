// CPU kernels of sorting: rows sorted in parallel (partial sorts for topk),
// unique by a stable sort of positions.
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernels/sort.h>
#include <brasa/util/parallel.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace brasa::cpu {
namespace {

// Strict weak order with NaN greater than everything.
template <class M>
bool less_nan_last(M a, M b) {
  if (b != b) return a == a;
  return a < b;
}

void sort_rows_cpu(const Tensor& rows, const Tensor& vals, const Tensor& idx, bool descending,
                   bool stable) {
  const int64_t R = rows.size(1), K = rows.size(0), k = vals.size(1);
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(rows.dtype(), "sort", [&] {
    using M = opmath_t<scalar_t>;
    const scalar_t* in = rows.data_ptr<scalar_t>();
    scalar_t* v = vals.data_ptr<scalar_t>();
    int64_t* ix = idx.data_ptr<int64_t>();
    parallel_for(0, K, std::max<int64_t>(1, 4096 / std::max<int64_t>(R, 1)),
                 [&](int64_t b, int64_t e) {
                   std::vector<int64_t> order(R);
                   for (int64_t row = b; row < e; ++row) {
                     const scalar_t* r = in + row * R;
                     std::iota(order.begin(), order.end(), 0);
                     auto cmp = [&](int64_t i, int64_t j) {
                       return descending ? less_nan_last<M>(M(r[j]), M(r[i]))
                                         : less_nan_last<M>(M(r[i]), M(r[j]));
                     };
                     if (k < R && !stable)
                       std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
                     else if (stable)
                       std::stable_sort(order.begin(), order.end(), cmp);
                     else
                       std::sort(order.begin(), order.end(), cmp);
                     for (int64_t i = 0; i < k; ++i) {
                       ix[row * k + i] = order[i];
                       v[row * k + i] = r[order[i]];
                     }
                   }
                 });
  });
}

std::tuple<Tensor, Tensor, Tensor> unique_cpu(const Tensor& flat, IntArrayRef like_shape,
                                              bool return_inverse, bool return_counts) {
  const int64_t n = flat.numel();
  Tensor values, inverse = empty({0}, flat.options().dtype(kLong)),
                 counts = empty({0}, flat.options().dtype(kLong));
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(flat.dtype(), "unique", [&] {
    using M = opmath_t<scalar_t>;
    const scalar_t* p = flat.data_ptr<scalar_t>();
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t i, int64_t j) { return less_nan_last<M>(M(p[i]), M(p[j])); });
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
    values = empty({u}, flat.options());
    std::copy(uniq.begin(), uniq.end(), values.data_ptr<scalar_t>());
    if (return_inverse) {
      inverse = empty(like_shape, flat.options().dtype(kLong));
      std::copy(group.begin(), group.end(), inverse.data_ptr<int64_t>());
    }
    if (return_counts) {
      counts = empty({u}, flat.options().dtype(kLong));
      std::copy(cnt.begin(), cnt.end(), counts.data_ptr<int64_t>());
    }
  });
  return {values, inverse, counts};
}

}  // namespace

void register_sort_kernels() {
  register_kernel<SortRowsKernel>(kCPU, sort_rows_cpu);
  register_kernel<UniqueKernel>(kCPU, unique_cpu);
}

}  // namespace brasa::cpu
