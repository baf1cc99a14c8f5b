// Softmax, log-softmax, cumsum and cumprod along a middle dim of a
// contiguous [outer, R, inner] tensor, in place of moving the dim last and
// back (two transposing copies): each step works on a run of `inner`
// neighbours at once, which the compiler vectorizes.
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/cpu/softmax_kernel.h>
#include <brasa/ops/cpu/vec_math.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

// Columns handled together: their running values stay in registers / L1.
constexpr int64_t kRun = 64;

// f(o, c0, n) for every outer index o and run of n <= kRun columns from c0,
// in parallel chunks of about 32K elements.
template <class F>
void for_each_run(int64_t outer, int64_t R, int64_t inner, const F& f) {
  const int64_t runs = (inner + kRun - 1) / kRun;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(R * kRun, 1));
  parallel_for(0, outer * runs, grain, [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / runs, c0 = item % runs * kRun;
      f(o, c0, std::min(kRun, inner - c0));
    }
  });
}

template <class T>
void scan_columns(const T* in, T* out, int64_t outer, int64_t R, int64_t inner, bool product) {
  using M = opmath_t<T>;
  for_each_run(outer, R, inner, [&](int64_t o, int64_t c0, int64_t n) {
    M acc[kRun];
    std::fill(acc, acc + n, product ? M(1) : M(0));
    const T* x = in + o * R * inner + c0;
    T* y = out + o * R * inner + c0;
    for (int64_t r = 0; r < R; ++r, x += inner, y += inner) {
      if (product)
        for (int64_t i = 0; i < n; ++i) acc[i] *= M(x[i]);
      else
        for (int64_t i = 0; i < n; ++i) acc[i] += M(x[i]);
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(acc[i]);
    }
  });
}

// Fewer float columns than a vector holds, and enough rows (a softmax over
// dim 1 of [128, 1024, 10]): each outer slab [R, inner] is transposed into a buffer,
// its `inner` rows go through the row kernel (softmax_kernel.h), and the
// result comes back transposed (the runs of `inner` neighbours took 1.4x
// libtorch's time).
constexpr int64_t kNarrow = 16;

void softmax_narrow_columns(const float* in, float* out, int64_t outer, int64_t R, int64_t inner,
                            bool log) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(R * inner, 1));
  parallel_for(0, outer, grain, [&](int64_t o0, int64_t o1) {
    std::vector<float> rows(static_cast<size_t>(R * inner)), mapped(rows.size());
    for (int64_t o = o0; o < o1; ++o) {
      const float* x = in + o * R * inner;
      float* y = out + o * R * inner;
      for (int64_t r = 0; r < R; ++r)
        for (int64_t i = 0; i < inner; ++i) rows[i * R + r] = x[r * inner + i];
      softmax_rows_float(rows.data(), mapped.data(), inner, R, log);
      for (int64_t r = 0; r < R; ++r)
        for (int64_t i = 0; i < inner; ++i) y[r * inner + i] = mapped[i * R + r];
    }
  });
}

// As the row version: shifted by the max (0 when it is -inf), a NaN spreads
// through its column.
template <class T>
void softmax_columns(const T* in, T* out, int64_t outer, int64_t R, int64_t inner, bool log) {
  using M = opmath_t<T>;
  if constexpr (std::is_same_v<T, float>)
    if (inner < kNarrow && R >= kNarrow)
      return softmax_narrow_columns(in, out, outer, R, inner, log);
  for_each_run(outer, R, inner, [&](int64_t o, int64_t c0, int64_t n) {
    M m[kRun], s[kRun];
    std::fill(m, m + n, -std::numeric_limits<M>::infinity());
    std::fill(s, s + n, M(0));
    const T* x0 = in + o * R * inner + c0;
    T* y0 = out + o * R * inner + c0;
    for (int64_t r = 0; r < R; ++r)
      for (int64_t i = 0; i < n; ++i) m[i] = std::max<M>(m[i], M(x0[r * inner + i]));
    for (int64_t i = 0; i < n; ++i)
      if (m[i] == -std::numeric_limits<M>::infinity()) m[i] = 0;
    for (int64_t r = 0; r < R; ++r)
      for (int64_t i = 0; i < n; ++i) s[i] += exp_of(M(x0[r * inner + i]) - m[i]);
    for (int64_t i = 0; i < n; ++i) m[i] += std::log(s[i]);  // now log of the sum of exp
    for (int64_t r = 0; r < R; ++r)
      for (int64_t i = 0; i < n; ++i) {
        const M v = M(x0[r * inner + i]) - m[i];
        y0[r * inner + i] = static_cast<T>(log ? v : exp_of(v));
      }
  });
}

void map_columns_cpu(const Tensor& in, const Tensor& out, int64_t outer, int64_t R, int64_t inner,
                     RowMap op) {
  if (op == RowMap::Cumsum || op == RowMap::Cumprod) {
    BRASA_DISPATCH_ALL_TYPES(in.dtype(), op == RowMap::Cumsum ? "cumsum" : "cumprod", [&] {
      scan_columns(in.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), outer, R, inner,
                   op == RowMap::Cumprod);
    });
    return;
  }
  const bool log = op == RowMap::LogSoftmax;
  BRASA_DISPATCH_FLOATING_TYPES(in.dtype(), log ? "log_softmax" : "softmax", [&] {
    softmax_columns(in.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), outer, R, inner, log);
  });
}

}  // namespace

void register_column_map_kernels() { register_kernel<MapColumnsKernel>(kCPU, map_columns_cpu); }

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
