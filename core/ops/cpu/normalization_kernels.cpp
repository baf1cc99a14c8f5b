#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/cpu/row_sums.h>
#include <brasa/ops/cpu/vec_math.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <tuple>
#include <vector>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

// Training-mode batch norm, fused. x is [N, C, S...] contiguous: channel c is
// N runs of S values. The work goes channel by channel (in parallel over
// channels), so a channel's values, read once from memory for its first pass,
// are still in cache for the next ones; the composite of reductions and
// broadcast ops it replaces read and wrote the whole tensor about ten times.

struct Shape {
  int64_t N, C, S;
  int64_t at(int64_t n, int64_t c) const { return (n * C + c) * S; }
  double count() const { return static_cast<double>(N * S); }
};

Shape shape_of(const Tensor& x) {
  const int64_t N = x.size(0), C = x.size(1);
  return {N, C, N * C == 0 ? 0 : x.numel() / (N * C)};
}

// Short runs (BatchNorm1d's [N, C] has runs of one value): x is N rows of
// R = C * S values, column j in channel j / S. Going channel by channel would
// read one strided value per run, so instead threads take blocks of columns
// and walk every row in order, the inner loop vectorized along the row.
constexpr int64_t kShortRun = 16;

// out[j] = the sum over rows n of term(n * R + j, j), for every column j.
template <class F>
void column_sums(int64_t N, int64_t R, double* out, const F& term) {
  std::fill(out, out + R, 0.0);
  parallel_for(0, R, std::max<int64_t>(16, 32768 / std::max<int64_t>(N, 1)),
               [&](int64_t j0, int64_t j1) {
                 for (int64_t n = 0; n < N; ++n) {
                   const int64_t row = n * R;
                   for (int64_t j = j0; j < j1; ++j) out[j] += term(row + j, j);
                 }
               });
}

// The sum of each channel's S columns.
std::vector<double> channel_totals(const std::vector<double>& columns, int64_t C, int64_t S) {
  std::vector<double> total(static_cast<size_t>(C), 0.0);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t s = 0; s < S; ++s) total[c] += columns[c * S + s];
  return total;
}

// A per-channel value repeated over the channel's S columns.
template <class T>
std::vector<T> per_column(const T* per_channel, int64_t C, int64_t S) {
  std::vector<T> out(static_cast<size_t>(C * S));
  for (int64_t j = 0; j < C * S; ++j) out[j] = per_channel[j / S];
  return out;
}

// out[n * R + j] = f(n * R + j, j) for every element, rows in parallel.
template <class F>
void for_each_column(int64_t N, int64_t R, const F& f) {
  parallel_for(0, N, std::max<int64_t>(1, 32768 / std::max<int64_t>(R, 1)),
               [&](int64_t n0, int64_t n1) {
                 for (int64_t n = n0; n < n1; ++n)
                   for (int64_t j = 0; j < R; ++j) f(n * R + j, j);
               });
}

// The forward's statistics and output for short runs: mean, 1/std and the
// biased variance per channel into mp, ip, vp; y = x * scale + shift.
template <class T>
void batch_norm_short_runs(const Shape& sh, const T* xp, T* yp, const T* wp, const T* bp, T* mp,
                           T* ip, T* vp, double eps) {
  const int64_t R = sh.C * sh.S;
  std::vector<double> columns(static_cast<size_t>(R));
  column_sums(sh.N, R, columns.data(), [xp](int64_t i, int64_t) { return double(xp[i]); });
  std::vector<double> sums = channel_totals(columns, sh.C, sh.S);
  for (int64_t c = 0; c < sh.C; ++c) mp[c] = static_cast<T>(sums[c] / sh.count());
  const std::vector<T> mean = per_column(mp, sh.C, sh.S);
  column_sums(sh.N, R, columns.data(), [&](int64_t i, int64_t j) {
    const T d = xp[i] - mean[j];  // about the mean: no cancellation
    return double(d * d);
  });
  std::vector<double> squares = channel_totals(columns, sh.C, sh.S);
  std::vector<T> scale(static_cast<size_t>(sh.C)), shift(static_cast<size_t>(sh.C));
  for (int64_t c = 0; c < sh.C; ++c) {
    const double v = squares[c] / sh.count();
    ip[c] = static_cast<T>(1.0 / std::sqrt(v + eps));
    vp[c] = static_cast<T>(v);
    scale[c] = wp ? wp[c] * ip[c] : ip[c];
    shift[c] = (bp ? bp[c] : T(0)) - mp[c] * scale[c];
  }
  const std::vector<T> sc = per_column(scale.data(), sh.C, sh.S),
                       sf = per_column(shift.data(), sh.C, sh.S);
  for_each_column(sh.N, R, [&](int64_t i, int64_t j) { yp[i] = xp[i] * sc[j] + sf[j]; });
}

// The backward for short runs (the formulas of batch_norm_backward_typed).
template <class T>
void batch_norm_backward_short_runs(const Shape& sh, const T* xp, const T* gp, const T* wp,
                                    const T* mp, const T* ip, T* dxp, T* dwp, T* dbp) {
  const int64_t R = sh.C * sh.S;
  const std::vector<T> mean = per_column(mp, sh.C, sh.S);
  std::vector<double> columns(static_cast<size_t>(R));
  column_sums(sh.N, R, columns.data(), [gp](int64_t i, int64_t) { return double(gp[i]); });
  const std::vector<double> sum_dy = channel_totals(columns, sh.C, sh.S);
  column_sums(sh.N, R, columns.data(),
              [&](int64_t i, int64_t j) { return double(gp[i] * (xp[i] - mean[j])); });
  const std::vector<double> sum_dy_xmu = channel_totals(columns, sh.C, sh.S);
  std::vector<T> scale(static_cast<size_t>(sh.C)), mean_dy(static_cast<size_t>(sh.C)),
      k(static_cast<size_t>(sh.C));
  const double M = sh.count();
  for (int64_t c = 0; c < sh.C; ++c) {
    scale[c] = static_cast<T>((wp ? wp[c] : T(1)) * ip[c]);
    mean_dy[c] = static_cast<T>(sum_dy[c] / M);
    k[c] = static_cast<T>(sum_dy_xmu[c] / M) * ip[c] * ip[c];
    dwp[c] = static_cast<T>(sum_dy_xmu[c] * ip[c]);
    dbp[c] = static_cast<T>(sum_dy[c]);
  }
  const std::vector<T> sc = per_column(scale.data(), sh.C, sh.S),
                       md = per_column(mean_dy.data(), sh.C, sh.S),
                       kc = per_column(k.data(), sh.C, sh.S);
  for_each_column(sh.N, R, [&](int64_t i, int64_t j) {
    dxp[i] = (gp[i] - md[j] - (xp[i] - mean[j]) * kc[j]) * sc[j];
  });
}

template <class T>
std::tuple<Tensor, Tensor, Tensor> batch_norm_typed(const Tensor& input, const Tensor& weight,
                                                    const Tensor& bias, const Tensor& running_mean,
                                                    const Tensor& running_var, double momentum,
                                                    double eps) {
  const Tensor x = input.contiguous();
  const Shape sh = shape_of(x);
  Tensor y = empty(x.sizes(), x.options());
  Tensor mean = empty({sh.C}, x.options()), invstd = empty({sh.C}, x.options());
  Tensor var = empty({sh.C}, x.options());
  const T* xp = x.data_ptr<T>();
  T* yp = y.data_ptr<T>();
  T *mp = mean.data_ptr<T>(), *ip = invstd.data_ptr<T>(), *vp = var.data_ptr<T>();
  const Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  const Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
  const T* bp = b.defined() ? b.data_ptr<T>() : nullptr;
  if (sh.S < kShortRun) {
    batch_norm_short_runs(sh, xp, yp, wp, bp, mp, ip, vp, eps);
  } else {
    parallel_for(0, sh.C, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        double sum = 0;
        for (int64_t n = 0; n < sh.N; ++n) {
          const T* p = xp + sh.at(n, c);
          sum += lane_sum<double, T>(sh.S, [p](int64_t i) { return p[i]; });
        }
        const T m = static_cast<T>(sum / sh.count());
        double squares = 0;  // about the mean: no cancellation
        for (int64_t n = 0; n < sh.N; ++n) {
          const T* p = xp + sh.at(n, c);
          squares +=
              lane_sum<double, T>(sh.S, [p, m](int64_t i) { return (p[i] - m) * (p[i] - m); });
        }
        const double v = squares / sh.count();
        const T is = static_cast<T>(1.0 / std::sqrt(v + eps));
        const T scale = wp ? wp[c] * is : is;
        const T shift = (bp ? bp[c] : T(0)) - m * scale;
        for (int64_t n = 0; n < sh.N; ++n) {
          const T* p = xp + sh.at(n, c);
          T* q = yp + sh.at(n, c);
          for (int64_t i = 0; i < sh.S; ++i) q[i] = p[i] * scale + shift;
        }
        mp[c] = m;
        ip[c] = is;
        vp[c] = static_cast<T>(v);
      }
    });
  }
  if (running_mean.defined() && running_var.defined()) {
    // PyTorch's update: the unbiased variance goes into running_var.
    const double count = sh.count();
    Tensor rm = running_mean, rv = running_var;  // handles to the caller's buffers
    rm.mul_(1 - momentum).add_(mean.to(rm.dtype()), momentum);
    rv.mul_(1 - momentum).add_(var.to(rv.dtype()), momentum * count / std::max(count - 1, 1.0));
  }
  return {y, mean, invstd};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_cpu(const Tensor& x, const Tensor& weight,
                                                  const Tensor& bias, const Tensor& running_mean,
                                                  const Tensor& running_var, double momentum,
                                                  double eps) {
  if (x.dtype() == kDouble)
    return batch_norm_typed<double>(x, weight, bias, running_mean, running_var, momentum, eps);
  BRASA_CHECK(x.dtype() == kFloat,
              "batch_norm: the fused CPU kernel takes float32 or float64, got ", x.dtype());
  return batch_norm_typed<float>(x, weight, bias, running_mean, running_var, momentum, eps);
}

// d(bias) = sum(dy), d(weight) = sum(dy * xhat), and
// dx = w * invstd * (dy - sum(dy) / M - xhat * sum(dy * xhat) / M)
// with xhat = (x - mean) * invstd and M the values per channel.
template <class T>
std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_typed(const Tensor& grad_out,
                                                             const Tensor& input,
                                                             const Tensor& weight,
                                                             const Tensor& save_mean,
                                                             const Tensor& save_invstd) {
  const Tensor x = input.contiguous(), dy = grad_out.contiguous();
  const Shape sh = shape_of(x);
  Tensor dx = empty(x.sizes(), x.options());
  Tensor dw = empty({sh.C}, x.options()), db = empty({sh.C}, x.options());
  const Tensor mean = save_mean.contiguous(), invstd = save_invstd.contiguous();
  const Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  const T *xp = x.data_ptr<T>(), *gp = dy.data_ptr<T>();
  const T *mp = mean.data_ptr<T>(), *ip = invstd.data_ptr<T>();
  const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
  T *dxp = dx.data_ptr<T>(), *dwp = dw.data_ptr<T>(), *dbp = db.data_ptr<T>();
  if (sh.S < kShortRun) {
    batch_norm_backward_short_runs(sh, xp, gp, wp, mp, ip, dxp, dwp, dbp);
    return {dx, dw, db};
  }
  parallel_for(0, sh.C, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const T m = mp[c], is = ip[c];
      double sum_dy = 0, sum_dy_xmu = 0;
      for (int64_t n = 0; n < sh.N; ++n) {
        const T *p = xp + sh.at(n, c), *g = gp + sh.at(n, c);
        sum_dy += lane_sum<double, T>(sh.S, [g](int64_t i) { return g[i]; });
        sum_dy_xmu += lane_sum<double, T>(sh.S, [p, g, m](int64_t i) { return g[i] * (p[i] - m); });
      }
      const double M = sh.count();
      const T scale = static_cast<T>((wp ? wp[c] : T(1)) * is);
      const T mean_dy = static_cast<T>(sum_dy / M);
      // xhat * sum(dy * xhat) / M = (x - mean) * invstd^2 * sum(dy * (x - mean)) / M
      const T k = static_cast<T>(sum_dy_xmu / M) * is * is;
      for (int64_t n = 0; n < sh.N; ++n) {
        const T *p = xp + sh.at(n, c), *g = gp + sh.at(n, c);
        T* q = dxp + sh.at(n, c);
        for (int64_t i = 0; i < sh.S; ++i) q[i] = (g[i] - mean_dy - (p[i] - m) * k) * scale;
      }
      dwp[c] = static_cast<T>(sum_dy_xmu * is);
      dbp[c] = static_cast<T>(sum_dy);
    }
  });
  return {dx, dw, db};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_cpu(const Tensor& grad_out, const Tensor& x,
                                                           const Tensor& weight,
                                                           const Tensor& save_mean,
                                                           const Tensor& save_invstd, double) {
  if (x.dtype() == kDouble)
    return batch_norm_backward_typed<double>(grad_out, x, weight, save_mean, save_invstd);
  return batch_norm_backward_typed<float>(grad_out, x, weight, save_mean, save_invstd);
}

// q = (p - m) * is * w + b over a row (w, b optional). The pointers are
// restrict-qualified: without it GCC assumed q might alias the captured
// weight pointers and spilled a vector to the stack on every iteration (a
// layer norm over [64, 28, 28] rows took 1.8x libtorch's time).
template <class T>
void write_normalized(const T* __restrict p, T m, T is, const T* __restrict w,
                      const T* __restrict b, T* __restrict q, int64_t n) {
  if (w && b)
    for (int64_t i = 0; i < n; ++i) q[i] = (p[i] - m) * is * w[i] + b[i];
  else if (w)
    for (int64_t i = 0; i < n; ++i) q[i] = (p[i] - m) * is * w[i];
  else if (b)
    for (int64_t i = 0; i < n; ++i) q[i] = (p[i] - m) * is + b[i];
  else
    for (int64_t i = 0; i < n; ++i) q[i] = (p[i] - m) * is;
}

// Layer norm: the same per-group math as batch norm, with a group being one
// contiguous row of x ([rows, row]); rows go in parallel.
template <class T>
std::tuple<Tensor, Tensor, Tensor> layer_norm_typed(const Tensor& x, int64_t row,
                                                    const Tensor& weight, const Tensor& bias,
                                                    double eps) {
  const int64_t rows = row == 0 ? 0 : x.numel() / row;
  Tensor y = empty(x.sizes(), x.options());
  Tensor mean = empty({rows}, x.options()), rstd = empty({rows}, x.options());
  const T* xp = x.data_ptr<T>();
  const T* wp = weight.defined() ? weight.data_ptr<T>() : nullptr;
  const T* bp = bias.defined() ? bias.data_ptr<T>() : nullptr;
  T *yp = y.data_ptr<T>(), *mp = mean.data_ptr<T>(), *rp = rstd.data_ptr<T>();
  parallel_for(0, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(row, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const T* p = xp + r * row;
                   T m;
                   double v;
                   row_moments(p, row, m, v);
                   const T is = static_cast<T>(1.0 / std::sqrt(v + eps));
                   write_normalized(p, m, is, wp, bp, yp + r * row, row);
                   mp[r] = m;
                   rp[r] = is;
                 }
               });
  return {y, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_cpu(const Tensor& x, int64_t row,
                                                  const Tensor& weight, const Tensor& bias,
                                                  double eps) {
  if (x.dtype() == kDouble) return layer_norm_typed<double>(x, row, weight, bias, eps);
  BRASA_CHECK(x.dtype() == kFloat,
              "layer_norm: the fused CPU kernel takes float32 or float64, got ", x.dtype());
  return layer_norm_typed<float>(x, row, weight, bias, eps);
}

// Per row, with dxhat = dy * w: dx = rstd * (dxhat - mean(dxhat) - xhat *
// mean(dxhat * xhat)). d(weight) and d(bias) sum dy * xhat and dy over the
// rows: each chunk of rows adds into its own partial sums, added up after.
template <class T>
std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_typed(const Tensor& dy, const Tensor& x,
                                                             int64_t row, const Tensor& mean,
                                                             const Tensor& rstd,
                                                             const Tensor& weight) {
  const int64_t rows = row == 0 ? 0 : x.numel() / row;
  Tensor dx = empty(x.sizes(), x.options());
  const T *xp = x.data_ptr<T>(), *gp = dy.data_ptr<T>(), *mp = mean.data_ptr<T>(),
          *rp = rstd.data_ptr<T>();
  const T* wp = weight.defined() ? weight.data_ptr<T>() : nullptr;
  T* dxp = dx.data_ptr<T>();
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(rows, 4 * get_num_threads()));
  // Few long rows (a layer norm over [C, H, W]) would make the chunks'
  // partial sums megabytes to clear and add up on one thread: there the
  // weight and bias gradients are a second pass, over strips of columns in
  // parallel (with lane_sum's four vectors, 8 rows of [64, 28, 28] fwd+bwd went
  // from 1.04 to 0.38 ms on 2 threads; libtorch 0.57-0.63).
  const bool by_columns =
      wp && static_cast<size_t>(chunks * 2 * row) * sizeof(double) > (size_t(1) << 20);
  std::vector<double> partial(wp && !by_columns ? static_cast<size_t>(chunks * 2 * row) : 0, 0.0);
  // The weight and bias gradients of up to kRowsInT rows add up in T, then
  // go into the chunk's double sums (converting every row's terms to double
  // took a quarter of the backward).
  constexpr int64_t kRowsInT = 64;
  parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    const bool sums = !partial.empty();
    std::vector<T> dxhat(wp ? static_cast<size_t>(row) : 0);
    std::vector<T> dw_rows(sums ? static_cast<size_t>(row) : 0),
        db_rows(sums ? static_cast<size_t>(row) : 0);
    for (int64_t c = c0; c < c1; ++c) {
      double* dw_part = sums ? partial.data() + c * 2 * row : nullptr;
      double* db_part = sums ? dw_part + row : nullptr;
      const int64_t r0 = rows * c / chunks, r1 = rows * (c + 1) / chunks;
      for (int64_t r = r0; r < r1; ++r) {
        const T *p = xp + r * row, *g = gp + r * row;
        const T m = mp[r], is = rp[r];
        const T* d = g;
        if (wp) {
          T* scaled = dxhat.data();
          for (int64_t i = 0; i < row; ++i) scaled[i] = g[i] * wp[i];
          d = scaled;
        }
        double sum_d, sum_dx;
        row_gradient_sums(d, p, m, row, sum_d, sum_dx);
        const T a = static_cast<T>(sum_d / row), k = static_cast<T>(sum_dx / row) * is * is;
        T* q = dxp + r * row;
        for (int64_t i = 0; i < row; ++i) q[i] = (d[i] - a - (p[i] - m) * k) * is;
        if (!sums) continue;
        T* __restrict dw = dw_rows.data();
        T* __restrict db = db_rows.data();
        for (int64_t i = 0; i < row; ++i) {
          dw[i] += g[i] * (p[i] - m) * is;
          db[i] += g[i];
        }
        if ((r - r0) % kRowsInT == kRowsInT - 1 || r == r1 - 1) {
          for (int64_t i = 0; i < row; ++i) {
            dw_part[i] += static_cast<double>(dw[i]);
            db_part[i] += static_cast<double>(db[i]);
          }
          std::fill(dw_rows.begin(), dw_rows.end(), T(0));
          std::fill(db_rows.begin(), db_rows.end(), T(0));
        }
      }
    }
  });
  if (!wp) return {dx, Tensor(), Tensor()};
  Tensor dw = empty({row}, x.options()), db = empty({row}, x.options());
  T *dwp = dw.data_ptr<T>(), *dbp = db.data_ptr<T>();
  if (by_columns) {
    constexpr int64_t kStrip = 512;
    parallel_for(0, (row + kStrip - 1) / kStrip, 1, [&](int64_t s0, int64_t s1) {
      double w_sum[kStrip], b_sum[kStrip];
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t i0 = s * kStrip, n = std::min(kStrip, row - i0);
        std::fill_n(w_sum, n, 0.0);
        std::fill_n(b_sum, n, 0.0);
        for (int64_t r = 0; r < rows; ++r) {
          const T *p = xp + r * row + i0, *g = gp + r * row + i0;
          const T m = mp[r], is = rp[r];
          for (int64_t i = 0; i < n; ++i) {
            w_sum[i] += static_cast<double>(g[i] * (p[i] - m) * is);
            b_sum[i] += static_cast<double>(g[i]);
          }
        }
        for (int64_t i = 0; i < n; ++i) {
          dwp[i0 + i] = static_cast<T>(w_sum[i]);
          dbp[i0 + i] = static_cast<T>(b_sum[i]);
        }
      }
    });
    return {dx, dw, db};
  }
  for (int64_t i = 0; i < row; ++i) {
    double w_sum = 0, b_sum = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      w_sum += partial[c * 2 * row + i];
      b_sum += partial[c * 2 * row + row + i];
    }
    dwp[i] = static_cast<T>(w_sum);
    dbp[i] = static_cast<T>(b_sum);
  }
  return {dx, dw, db};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_cpu(const Tensor& dy, const Tensor& x,
                                                           int64_t row, const Tensor& mean,
                                                           const Tensor& rstd,
                                                           const Tensor& weight) {
  if (x.dtype() == kDouble)
    return layer_norm_backward_typed<double>(dy, x, row, mean, rstd, weight);
  return layer_norm_backward_typed<float>(dy, x, row, mean, rstd, weight);
}

// x^e: float through the vectorizable fast_powf, double through libm.
template <class T>
inline T raise(T x, T e) {
  if constexpr (std::is_same_v<T, float>)
    return fast_powf(x, e);
  else
    return std::pow(x, e);
}

// The channels [first, last] of a window from `lead` channels before c to
// `trail` after it, clipped to [0, C).
inline std::pair<int64_t, int64_t> channel_window(int64_t c, int64_t C, int64_t lead,
                                                  int64_t trail) {
  return {std::max<int64_t>(0, c - lead), std::min<int64_t>(C - 1, c + trail)};
}

// Row by row (a row: one sample's channel, S values): the window's squares
// summed into a row buffer, then scale and y.
template <class T>
void local_response_norm_typed(const T* x, T* y, T* scale, T* power, int64_t N, int64_t C,
                               int64_t S, int64_t size, T alpha, T beta, T k) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(S * size, 1));
  parallel_for(0, N * C, grain, [&](int64_t begin, int64_t end) {
    std::vector<T> sums(static_cast<size_t>(S));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / C, c = r % C;
      const auto [first, last] = channel_window(c, C, size / 2, (size - 1) / 2);
      std::fill(sums.begin(), sums.end(), T(0));
      for (int64_t j = first; j <= last; ++j) {
        const T* xj = x + (n * C + j) * S;
        for (int64_t s = 0; s < S; ++s) sums[s] += xj[s] * xj[s];
      }
      // Distinct rows: __restrict lets the loop vectorize without alias checks.
      const T* __restrict xr = x + r * S;
      const T* __restrict sum = sums.data();
      T* __restrict yr = y + r * S;
      T* __restrict sr = scale + r * S;
      T* __restrict pr = power + r * S;
      // Locals, not the captured references, which the stores could alias.
      const T per = alpha / static_cast<T>(size), offset = k, exponent = -beta;
      for (int64_t s = 0; s < S; ++s) {
        const T sc = offset + per * sum[s], p = raise(sc, exponent);
        sr[s] = sc;
        pr[s] = p;
        yr[s] = xr[s] * p;
      }
    }
  });
}

void local_response_norm_cpu(const Tensor& x, const Tensor& y, const Tensor& scale,
                             const Tensor& power, int64_t N, int64_t C, int64_t S, int64_t size,
                             double alpha, double beta, double k) {
  BRASA_DISPATCH_FLOATING_TYPES(x.dtype(), "local_response_norm", [&] {
    using T = scalar_t;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      local_response_norm_typed<T>(x.data_ptr<T>(), y.data_ptr<T>(), scale.data_ptr<T>(),
                                   power.data_ptr<T>(), N, C, S, size, static_cast<T>(alpha),
                                   static_cast<T>(beta), static_cast<T>(k));
    } else {
      BRASA_ERROR("local_response_norm: the CPU kernel takes float and double, got ", x.dtype());
    }
  });
}

// t = g * x * power / scale first (each row is read by `size` windows), then per
// row the sum of t over the channels whose windows hold it: the window
// mirrored, (size - 1) / 2 before and size / 2 after.
template <class T>
void local_response_norm_backward_typed(const T* g, const T* x, const T* scale, const T* power,
                                        T* gx, T* t, int64_t N, int64_t C, int64_t S, int64_t size,
                                        T alpha, T beta) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(S, 1));
  parallel_for(0, N * C * S, grain * S, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) t[i] = g[i] * x[i] * power[i] / scale[i];
  });
  const T factor = 2 * alpha * beta / static_cast<T>(size);
  parallel_for(0, N * C, std::max<int64_t>(1, grain / size), [&](int64_t begin, int64_t end) {
    std::vector<T> sums(static_cast<size_t>(S));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / C, c = r % C;
      const auto [first, last] = channel_window(c, C, (size - 1) / 2, size / 2);
      std::fill(sums.begin(), sums.end(), T(0));
      for (int64_t i = first; i <= last; ++i) {
        const T* ti = t + (n * C + i) * S;
        for (int64_t s = 0; s < S; ++s) sums[s] += ti[s];
      }
      const T* gr = g + r * S;
      const T* xr = x + r * S;
      const T* pr = power + r * S;
      T* out = gx + r * S;
      for (int64_t s = 0; s < S; ++s) out[s] = gr[s] * pr[s] - factor * xr[s] * sums[s];
    }
  });
}

void local_response_norm_backward_cpu(const Tensor& grad_y, const Tensor& x, const Tensor& scale,
                                      const Tensor& power, const Tensor& grad_x, int64_t N,
                                      int64_t C, int64_t S, int64_t size, double alpha,
                                      double beta) {
  BRASA_DISPATCH_FLOATING_TYPES(x.dtype(), "local_response_norm backward", [&] {
    using T = scalar_t;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      Tensor t = empty({N * C * S}, x.options());  // g * x * power / scale
      local_response_norm_backward_typed<T>(grad_y.data_ptr<T>(), x.data_ptr<T>(),
                                            scale.data_ptr<T>(), power.data_ptr<T>(),
                                            grad_x.data_ptr<T>(), t.data_ptr<T>(), N, C, S, size,
                                            static_cast<T>(alpha), static_cast<T>(beta));
    } else {
      BRASA_ERROR("local_response_norm backward: the CPU kernel takes float and double, got ",
                  x.dtype());
    }
  });
}

}  // namespace

void register_normalization_kernels() {
  register_kernel<BatchNormKernel>(kCPU, batch_norm_cpu);
  register_kernel<BatchNormBackwardKernel>(kCPU, batch_norm_backward_cpu);
  register_kernel<LayerNormKernel>(kCPU, layer_norm_cpu);
  register_kernel<LayerNormBackwardKernel>(kCPU, layer_norm_backward_cpu);
  register_kernel<LocalResponseNormKernel>(kCPU, local_response_norm_cpu);
  register_kernel<LocalResponseNormBackwardKernel>(kCPU, local_response_norm_backward_cpu);
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
