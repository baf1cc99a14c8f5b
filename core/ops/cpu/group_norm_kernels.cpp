// Group norm on the CPU (GroupNormKernel, GroupNormBackwardKernel), fused:
// a (sample, group) is one contiguous row of C / G channels of S values.
// Forward: the row's moments, then each channel's scale and shift in one
// pass. Backward: each channel's sums of dy and dy * x, then dx in one pass
// with the row's coefficients; the weight's and bias's gradients from the
// same sums. The layer norm and channel affine it replaces took two passes
// each way and kept the normalized tensor.
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/cpu/row_sums.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernels/normalization.h>
#include <brasa/util/parallel.h>

#include <cmath>
#include <tuple>
#include <vector>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

struct GroupShape {
  int64_t N, C, S, G, D;  // D: channels per group
};
GroupShape group_shape(const Tensor& x, int64_t G) {
  const int64_t N = x.size(0), C = x.size(1);
  return {N, C, N * C == 0 ? 0 : x.numel() / (N * C), G, C / G};
}

// Rows of a few thousand values or more each make a task; small ones group.
int64_t row_grain(const GroupShape& sh) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(sh.D * sh.S, 1));
}

template <class T>
std::tuple<Tensor, Tensor, Tensor> group_norm_typed(const Tensor& x, int64_t G,
                                                    const Tensor& weight, const Tensor& bias,
                                                    double eps) {
  const GroupShape sh = group_shape(x, G);
  Tensor y = empty(x.sizes(), x.options());
  Tensor mean = empty({sh.N, G}, x.options()), rstd = empty({sh.N, G}, x.options());
  const T* xp = x.data_ptr<T>();
  const T* wp = weight.defined() ? weight.data_ptr<T>() : nullptr;
  const T* bp = bias.defined() ? bias.data_ptr<T>() : nullptr;
  T *yp = y.data_ptr<T>(), *mp = mean.data_ptr<T>(), *rp = rstd.data_ptr<T>();
  parallel_for(0, sh.N * G, row_grain(sh), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t first_channel = (r % G) * sh.D;
      const T* p = xp + r * sh.D * sh.S;
      T* q = yp + r * sh.D * sh.S;
      T m;
      double v;
      row_moments(p, sh.D * sh.S, m, v);
      const T is = static_cast<T>(1.0 / std::sqrt(v + eps));
      for (int64_t j = 0; j < sh.D; ++j) {
        const int64_t c = first_channel + j;
        const T scale = wp ? wp[c] * is : is;
        const T shift = (bp ? bp[c] : T(0)) - m * scale;
        const T* __restrict in = p + j * sh.S;
        T* __restrict out = q + j * sh.S;
        for (int64_t s = 0; s < sh.S; ++s) out[s] = in[s] * scale + shift;
      }
      mp[r] = m;
      rp[r] = is;
    }
  });
  return {y, mean, rstd};
}

// With w the channel's weight (1 without one), mu and rs the row's mean and
// rstd, M = D * S, and per channel ds = sum(dy * x), db = sum(dy):
//   dx = w * rs * dy + c2 * x + c3, where over the row's channels
//   c2 = (sum(db * w) * mu - sum(ds * w)) * rs^3 / M,
//   c3 = -c2 * mu - sum(db * w) * rs / M;
//   d(weight)[c] = sum over samples of (ds - mu * db) * rs, d(bias)[c] = sum of db.
template <class T>
std::tuple<Tensor, Tensor, Tensor> group_norm_backward_typed(const Tensor& dy, const Tensor& x,
                                                             int64_t G, const Tensor& mean,
                                                             const Tensor& rstd,
                                                             const Tensor& weight) {
  const GroupShape sh = group_shape(x, G);
  Tensor dx = empty(x.sizes(), x.options());
  const T *xp = x.data_ptr<T>(), *gp = dy.data_ptr<T>(), *mp = mean.data_ptr<T>(),
          *rp = rstd.data_ptr<T>();
  const T* wp = weight.defined() ? weight.data_ptr<T>() : nullptr;
  T* dxp = dx.data_ptr<T>();
  // Each (sample, channel)'s sums, for the weight's and bias's gradients.
  std::vector<double> ds(static_cast<size_t>(sh.N * sh.C)), db(ds.size());
  const double M = static_cast<double>(sh.D * sh.S);
  parallel_for(0, sh.N * G, row_grain(sh), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t first = r * sh.D;  // the row's first (sample, channel) pair
      const int64_t first_channel = (r % G) * sh.D;
      double ds_w = 0, db_w = 0;
      for (int64_t j = 0; j < sh.D; ++j) {
        const T* p = xp + (first + j) * sh.S;
        const T* g = gp + (first + j) * sh.S;
        double sum_g, sum_gx;
        row_gradient_sums(g, p, T(0), sh.S, sum_g, sum_gx);
        ds[first + j] = sum_gx;
        db[first + j] = sum_g;
        const double w = wp ? static_cast<double>(wp[first_channel + j]) : 1.0;
        ds_w += sum_gx * w;
        db_w += sum_g * w;
      }
      const double mu = mp[r], rs = rp[r];
      const double c2 = (db_w * mu - ds_w) * rs * rs * rs / M;
      const T c3 = static_cast<T>(-c2 * mu - db_w * rs / M), c2t = static_cast<T>(c2);
      for (int64_t j = 0; j < sh.D; ++j) {
        const T a = static_cast<T>((wp ? wp[first_channel + j] : T(1)) * rs);
        const T* __restrict p = xp + (first + j) * sh.S;
        const T* __restrict g = gp + (first + j) * sh.S;
        T* __restrict q = dxp + (first + j) * sh.S;
        for (int64_t s = 0; s < sh.S; ++s) q[s] = a * g[s] + c2t * p[s] + c3;
      }
    }
  });
  Tensor dw = wp ? empty({sh.C}, x.options()) : Tensor(), dbias = empty({sh.C}, x.options());
  T* dwp = wp ? dw.data_ptr<T>() : nullptr;
  T* dbp = dbias.data_ptr<T>();
  for (int64_t c = 0; c < sh.C; ++c) {
    double w_sum = 0, b_sum = 0;
    for (int64_t n = 0; n < sh.N; ++n) {
      const int64_t r = n * G + c / sh.D, k = n * sh.C + c;
      w_sum += (ds[k] - static_cast<double>(mp[r]) * db[k]) * static_cast<double>(rp[r]);
      b_sum += db[k];
    }
    if (dwp) dwp[c] = static_cast<T>(w_sum);
    dbp[c] = static_cast<T>(b_sum);
  }
  return {dx, dw, dbias};
}

std::tuple<Tensor, Tensor, Tensor> group_norm_cpu(const Tensor& x, int64_t G, const Tensor& weight,
                                                  const Tensor& bias, double eps) {
  if (x.dtype() == kDouble) return group_norm_typed<double>(x, G, weight, bias, eps);
  BRASA_CHECK(x.dtype() == kFloat,
              "group_norm: the fused CPU kernel takes float32 or float64, got ", x.dtype());
  return group_norm_typed<float>(x, G, weight, bias, eps);
}

std::tuple<Tensor, Tensor, Tensor> group_norm_backward_cpu(const Tensor& dy, const Tensor& x,
                                                           int64_t G, const Tensor& mean,
                                                           const Tensor& rstd,
                                                           const Tensor& weight) {
  if (x.dtype() == kDouble) return group_norm_backward_typed<double>(dy, x, G, mean, rstd, weight);
  return group_norm_backward_typed<float>(dy, x, G, mean, rstd, weight);
}

}  // namespace

void register_group_norm_kernels() {
  register_kernel<GroupNormKernel>(kCPU, group_norm_cpu);
  register_kernel<GroupNormBackwardKernel>(kCPU, group_norm_backward_cpu);
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
