// The CPU kernel of softmax's and log_softmax's gradient (SoftmaxBackwardKernel):
// per row (or per column block when the dim is not the last) one pass that
// sums g (or g * y) and one that writes the gradient while the row is still
// in cache.
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/cpu/vec_math.h>
#include <brasa/ops/kernels/reduction.h>
#include <brasa/tensor/half.h>
#include <brasa/util/parallel.h>

#include <algorithm>
#include <cmath>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

// What a row's sum adds at one place: g (log_softmax) or g * y (softmax).
template <bool kLog, class M>
[[gnu::always_inline]] inline M summand(M g, M y) {
  return kLog ? g : g * y;
}
// The gradient at one place from g, y and the row's sum s.
template <bool kLog, class M>
[[gnu::always_inline]] inline M gradient(M g, M y, M s) {
  return kLog ? g - exp_of(y) * s : y * (g - s);
}

// The sum over a row of n values, in 16 independent lanes so that the
// compiler vectorizes it without reordering one running sum.
template <bool kLog, class T, class M>
M row_sum(const T* g, const T* y, int64_t n) {
  M lanes[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) lanes[j] += summand<kLog>(M(g[i + j]), M(y[i + j]));
  M s = 0;
  for (M v : lanes) s += v;
  for (; i < n; ++i) s += summand<kLog>(M(g[i]), M(y[i]));
  return s;
}

template <bool kLog, class T>
void rows(const T* g, const T* y, T* gx, int64_t K, int64_t R) {
  using M = opmath_t<T>;
  parallel_for(0, K, std::max<int64_t>(1, 32768 / std::max<int64_t>(R, 1)),
               [=](int64_t b, int64_t e) {
                 for (int64_t k = b; k < e; ++k) {
                   const T *gr = g + k * R, *yr = y + k * R;
                   T* out = gx + k * R;
                   const M s = row_sum<kLog, T, M>(gr, yr, R);
                   for (int64_t i = 0; i < R; ++i)
                     out[i] = static_cast<T>(gradient<kLog>(M(gr[i]), M(yr[i]), s));
                 }
               });
}

// Along a middle dim: `inner` columns side by side, taken in blocks whose
// sums sit in a local array (the rows of a block are contiguous runs).
template <bool kLog, class T>
void columns(const T* g, const T* y, T* gx, int64_t outer, int64_t R, int64_t inner) {
  using M = opmath_t<T>;
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(R * kBlock, 1));
  parallel_for(0, outer * blocks, grain, [=](int64_t b, int64_t e) {
    M s[kBlock];
    for (int64_t task = b; task < e; ++task) {
      const int64_t o = task / blocks, j0 = task % blocks * kBlock;
      const int64_t m = std::min(kBlock, inner - j0);
      std::fill(s, s + m, M(0));
      for (int64_t r = 0; r < R; ++r) {
        const int64_t at = (o * R + r) * inner + j0;
        for (int64_t j = 0; j < m; ++j) s[j] += summand<kLog>(M(g[at + j]), M(y[at + j]));
      }
      for (int64_t r = 0; r < R; ++r) {
        const int64_t at = (o * R + r) * inner + j0;
        for (int64_t j = 0; j < m; ++j)
          gx[at + j] = static_cast<T>(gradient<kLog>(M(g[at + j]), M(y[at + j]), s[j]));
      }
    }
  });
}

void softmax_backward_cpu(const Tensor& grad, const Tensor& out, const Tensor& grad_input,
                          int64_t outer, int64_t R, int64_t inner, bool log) {
  BRASA_DISPATCH_FLOATING_TYPES(
      out.dtype(), log ? "log_softmax backward" : "softmax backward", [&] {
        const scalar_t* g = grad.data_ptr<scalar_t>();
        const scalar_t* y = out.data_ptr<scalar_t>();
        scalar_t* gx = grad_input.data_ptr<scalar_t>();
        if (inner == 1)
          log ? rows<true>(g, y, gx, outer, R) : rows<false>(g, y, gx, outer, R);
        else
          log ? columns<true>(g, y, gx, outer, R, inner)
              : columns<false>(g, y, gx, outer, R, inner);
      });
}

}  // namespace

void register_softmax_backward_kernels() {
  register_kernel<SoftmaxBackwardKernel>(kCPU, softmax_backward_cpu);
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
