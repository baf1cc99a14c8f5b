// Fused GELU and its derivative: one pass over memory instead of the five of
// the composite (scale, erf, add, two products). float goes through
// branch-free math the compiler vectorizes; double through libm. Leaky ReLU
// and its derivative: one pass each instead of the composite's three
// (compare, scale, where) and five.
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/channel_rows.h>
#include <brasa/ops/cpu/elementwise_run.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/cpu/vec_math.h>

#include <type_traits>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

constexpr double kSqrtHalf = 0.70710678118654752440;    // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kTanhScale = 0.79788456080286535588;   // sqrt(2 / pi)
constexpr double kTanhCubic = 0.044715;

// Phi(x) (the normal CDF) and phi(x) (its density). float: erfc of
// |x| / sqrt(2) by Abramowitz and Stegun 7.1.26, t P(t) exp(-z^2), which is
// good to 1.5e-7 (PyTorch's vectorized erf uses the same formula), written
// for x < 0 directly as the small tail so that no 1 - (1 - tiny) cancels.
inline void normal_cdf_pdf(float x, float& cdf, float& pdf) {
  const float z = (x < 0 ? -x : x) * static_cast<float>(kSqrtHalf);
  const float t = 1.0f / (1.0f + 0.3275911f * z);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float e = fast_exp(-z * z);  // exp(-x^2 / 2)
  const float tail = 0.5f * p * t * e;
  cdf = x < 0 ? tail : 1.0f - tail;
  pdf = static_cast<float>(kInvSqrt2Pi) * e;
}
inline void normal_cdf_pdf(double x, double& cdf, double& pdf) {
  cdf = 0.5 * std::erfc(-x * kSqrtHalf);
  pdf = kInvSqrt2Pi * std::exp(-0.5 * x * x);
}

// vec_math's tanh (vectorizes; keeps small u's relative precision).
inline float tanh_of(float u) { return fast_tanh(u); }
inline double tanh_of(double u) { return std::tanh(u); }

template <class T>
T gelu_value(T x, bool tanh_approximation) {
  if (tanh_approximation) {
    const T u = static_cast<T>(kTanhScale) * (x + static_cast<T>(kTanhCubic) * x * x * x);
    return T(0.5) * x * (T(1) + tanh_of(u));
  }
  T cdf, pdf;
  normal_cdf_pdf(x, cdf, pdf);
  return x * cdf;
}

template <class T>
T gelu_derivative(T x, bool tanh_approximation) {
  if (tanh_approximation) {
    const T x2 = x * x;
    const T u = static_cast<T>(kTanhScale) * x * (T(1) + static_cast<T>(kTanhCubic) * x2);
    const T t = tanh_of(u);
    const T du = static_cast<T>(kTanhScale) * (T(1) + T(3) * static_cast<T>(kTanhCubic) * x2);
    return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du;
  }
  T cdf, pdf;
  normal_cdf_pdf(x, cdf, pdf);
  return cdf + x * pdf;
}

// out[i] = f(i) over n values, in parallel chunks; the loops take the mode
// as a template argument so that each is a plain loop the compiler vectorizes.
template <class T, class F>
void for_each_value(int64_t n, const F& f) {
  parallel_for(0, n, 16384, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

template <class T, bool kTanh>
void gelu_loop(const T* x, T* y, int64_t n) {
  for_each_value<T>(n, [&](int64_t i) { y[i] = gelu_value<T>(x[i], kTanh); });
}
template <class T, bool kTanh>
void gelu_backward_loop(const T* g, const T* x, T* gx, int64_t n) {
  for_each_value<T>(n, [&](int64_t i) { gx[i] = g[i] * gelu_derivative<T>(x[i], kTanh); });
}

Tensor gelu_cpu(const Tensor& x, bool tanh_approximation) {
  Tensor y = empty(x.sizes(), x.options());
  const int64_t n = x.numel();
  if (x.dtype() == kFloat) {
    if (tanh_approximation)
      gelu_loop<float, true>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    else
      gelu_loop<float, false>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  } else {
    BRASA_CHECK(x.dtype() == kDouble, "gelu: the CPU kernel takes float and double, got ",
                x.dtype());
    if (tanh_approximation)
      gelu_loop<double, true>(x.data_ptr<double>(), y.data_ptr<double>(), n);
    else
      gelu_loop<double, false>(x.data_ptr<double>(), y.data_ptr<double>(), n);
  }
  return y;
}

Tensor gelu_backward_cpu(const Tensor& grad, const Tensor& x, bool tanh_approximation) {
  Tensor gx = empty(x.sizes(), x.options());
  const int64_t n = x.numel();
  if (x.dtype() == kFloat) {
    const float *g = grad.data_ptr<float>(), *xp = x.data_ptr<float>();
    if (tanh_approximation)
      gelu_backward_loop<float, true>(g, xp, gx.data_ptr<float>(), n);
    else
      gelu_backward_loop<float, false>(g, xp, gx.data_ptr<float>(), n);
  } else {
    BRASA_CHECK(x.dtype() == kDouble, "gelu backward: the CPU kernel takes float and double, got ",
                x.dtype());
    const double *g = grad.data_ptr<double>(), *xp = x.data_ptr<double>();
    if (tanh_approximation)
      gelu_backward_loop<double, true>(g, xp, gx.data_ptr<double>(), n);
    else
      gelu_backward_loop<double, false>(g, xp, gx.data_ptr<double>(), n);
  }
  return gx;
}

// A NaN input stays NaN (x * slope), as in PyTorch.
void leaky_relu_cpu(detail::Elementwise& e, ScalarType t, double negative_slope) {
  BRASA_DISPATCH_FLOATING_TYPES(t, "leaky_relu", [&] {
    using M = opmath_t<scalar_t>;
    const M slope = static_cast<M>(negative_slope);
    run<scalar_t, scalar_t>(e, [slope](M x) { return x > M(0) ? x : x * slope; });
  });
}

void leaky_relu_backward_cpu(detail::Elementwise& e, ScalarType t, double negative_slope) {
  BRASA_DISPATCH_FLOATING_TYPES(t, "leaky_relu backward", [&] {
    using M = opmath_t<scalar_t>;
    const M slope = static_cast<M>(negative_slope);
    run<scalar_t, scalar_t, scalar_t>(e, [slope](M g, M x) { return x > M(0) ? g : g * slope; });
  });
}

// sigmoid by type: vec_math's vectorizing form for float (and the 16-bit
// floats, computed in float), libm for double.
[[gnu::always_inline]] inline float sigmoid_of(float x) { return fast_sigmoid(x); }
inline double sigmoid_of(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// e^x - 1 keeping small x's relative precision (e^x - 1 in float gives
// -1.013e-6 for x = -1e-6): Taylor's polynomial to x^8 for |x| < 1/2 (good
// to 2e-9 relative), e^x - 1 beyond.
[[gnu::always_inline]] inline float expm1_of(float x) {
  const float p =
      x * (1.0f +
           x * (0.5f + x * (1.0f / 6 +
                            x * (1.0f / 24 +
                                 x * (1.0f / 120 + x * (1.0f / 720 + x * (1.0f / 5040 +
                                                                          x * (1.0f / 40320))))))));
  return std::fabs(x) < 0.5f ? p : fast_exp(x) - 1.0f;
}
inline double expm1_of(double x) { return std::expm1(x); }

// softplus(z) = max(z, 0) + log(1 + e^-|z|), stable for every z.
[[gnu::always_inline]] inline float softplus_of(float z) {
  return (z > 0.0f ? z : 0.0f) + fast_log1p_unit(fast_exp(-std::fabs(z)));
}
inline double softplus_of(double z) {
  return std::max(z, 0.0) + std::log1p(std::exp(-std::fabs(z)));
}

// tanh(softplus(x)) without a logarithm: with u = e^x, (1 + u)^2 = e^(2 sp),
// so tanh(sp) = n / (n + 2) with n = u (u + 2); 1 from x = 20 on (where u^2
// would overflow), as PyTorch's softplus threshold.
template <class M>
[[gnu::always_inline]] inline M tanh_softplus(M x) {
  const M u = exp_of(x < M(20) ? x : M(0)), n = u * (u + M(2));
  return x < M(20) ? n / (n + M(2)) : M(1);
}

// f(x), one instantiation per activation so that each inlines into its loop.
template <Activation kA, class M>
[[gnu::always_inline]] inline M activation_value(M x, M alpha, M scale, M input_scale, M beta,
                                                 M threshold) {
  if constexpr (kA == Activation::Elu) {
    return x > M(0) ? scale * x : scale * alpha * expm1_of(x * input_scale);
  } else if constexpr (kA == Activation::Silu) {
    return x * sigmoid_of(x);
  } else if constexpr (kA == Activation::Mish) {
    return x * tanh_softplus(x);
  } else if constexpr (kA == Activation::Softplus) {
    const M z = beta * x;
    return z > threshold ? x : softplus_of(z) / beta;
  } else {
    return x <= M(-3) ? M(0) : (x >= M(3) ? x : x * (x + M(3)) / M(6));
  }
}

// f'(x), with PyTorch's values at the kinks (elu: the x <= 0 side at 0;
// hardswish: x / 3 + 1/2 on [-3, 3]).
template <Activation kA, class M>
[[gnu::always_inline]] inline M activation_derivative(M x, M alpha, M scale, M input_scale, M beta,
                                                      M threshold) {
  if constexpr (kA == Activation::Elu) {
    return x > M(0) ? scale : scale * alpha * input_scale * exp_of(x * input_scale);
  } else if constexpr (kA == Activation::Silu) {
    const M s = sigmoid_of(x);
    return s * (M(1) + x * (M(1) - s));
  } else if constexpr (kA == Activation::Mish) {
    const M t = tanh_softplus(x);
    return t + x * sigmoid_of(x) * (M(1) - t * t);
  } else if constexpr (kA == Activation::Softplus) {
    const M z = beta * x;
    return z > threshold ? M(1) : sigmoid_of(z);
  } else {
    return x < M(-3) ? M(0) : (x <= M(3) ? x / M(3) + M(0.5) : M(1));
  }
}

// One plain loop per activation (the switch is outside it, so each
// vectorizes).
template <Activation kA>
void activation_forward(detail::Elementwise& e, ScalarType t, const ActivationParams& p) {
  BRASA_DISPATCH_FLOATING_TYPES(t, "activation", [&] {
    using M = opmath_t<scalar_t>;
    const M alpha = M(p.alpha), scale = M(p.scale), is = M(p.input_scale), beta = M(p.beta),
            threshold = M(p.threshold);
    run<scalar_t, scalar_t>(e, [=](M x) BRASA_INLINE_LAMBDA {
      return activation_value<kA, M>(x, alpha, scale, is, beta, threshold);
    });
  });
}
template <Activation kA>
void activation_backward(detail::Elementwise& e, ScalarType t, const ActivationParams& p) {
  BRASA_DISPATCH_FLOATING_TYPES(t, "activation backward", [&] {
    using M = opmath_t<scalar_t>;
    const M alpha = M(p.alpha), scale = M(p.scale), is = M(p.input_scale), beta = M(p.beta),
            threshold = M(p.threshold);
    run<scalar_t, scalar_t, scalar_t>(e, [=](M g, M x) BRASA_INLINE_LAMBDA {
      return g * activation_derivative<kA, M>(x, alpha, scale, is, beta, threshold);
    });
  });
}

// Calls f with the activation as a compile-time constant (one instantiation
// of each loop per activation).
template <class F>
void with_activation(Activation a, const F& f) {
  using A = Activation;
  switch (a) {
    case A::Elu:
      return f(std::integral_constant<A, A::Elu>());
    case A::Silu:
      return f(std::integral_constant<A, A::Silu>());
    case A::Mish:
      return f(std::integral_constant<A, A::Mish>());
    case A::Hardswish:
      return f(std::integral_constant<A, A::Hardswish>());
    case A::Softplus:
      return f(std::integral_constant<A, A::Softplus>());
  }
}

void activation_cpu(detail::Elementwise& e, ScalarType t, Activation a, const ActivationParams& p) {
  with_activation(a, [&](auto k) { activation_forward<decltype(k)::value>(e, t, p); });
}
void activation_backward_cpu(detail::Elementwise& e, ScalarType t, Activation a,
                             const ActivationParams& p) {
  with_activation(a, [&](auto k) { activation_backward<decltype(k)::value>(e, t, p); });
}

void output_activation_backward_cpu(detail::Elementwise& e, ScalarType t, OutputActivation a) {
  BRASA_DISPATCH_FLOATING_TYPES(t, "sigmoid/tanh backward", [&] {
    using M = opmath_t<scalar_t>;
    if (a == OutputActivation::Sigmoid)
      run<scalar_t, scalar_t, scalar_t>(
          e, [](M g, M y) BRASA_INLINE_LAMBDA { return g * (y * (M(1) - y)); });
    else
      run<scalar_t, scalar_t, scalar_t>(
          e, [](M g, M y) BRASA_INLINE_LAMBDA { return g * (M(1) - y * y); });
  });
}

// Smooth L1 and Huber: the loss of d = x - y and its derivative in x (0 at d
// = 0, as PyTorch).
void pointwise_loss_cpu(detail::Elementwise& e, ScalarType t, PointwiseLoss l, double param) {
  BRASA_DISPATCH_FLOATING_TYPES(t, "smooth_l1/huber loss", [&] {
    using M = opmath_t<scalar_t>;
    const M p = M(param), half = M(0.5);
    if (l == PointwiseLoss::SmoothL1)
      run<scalar_t, scalar_t, scalar_t>(e, [p, half](M x, M y) {
        const M d = std::fabs(x - y);
        return d < p ? half * d * d / p : d - half * p;
      });
    else
      run<scalar_t, scalar_t, scalar_t>(e, [p, half](M x, M y) {
        const M d = std::fabs(x - y);
        return d < p ? half * d * d : p * (d - half * p);
      });
  });
}
void pointwise_loss_backward_cpu(detail::Elementwise& e, ScalarType t, PointwiseLoss l,
                                 double param) {
  BRASA_DISPATCH_FLOATING_TYPES(t, "smooth_l1/huber loss backward", [&] {
    using M = opmath_t<scalar_t>;
    const M p = M(param);
    // Beyond the quadratic part the slope is +-1 (smooth L1) or +-delta (Huber).
    const M inner = l == PointwiseLoss::SmoothL1 ? M(1) / p : M(1);
    const M outer = l == PointwiseLoss::SmoothL1 ? M(1) : p;
    run<scalar_t, scalar_t, scalar_t, scalar_t>(e, [p, inner, outer](M g, M x, M y) {
      const M d = x - y;
      const M slope = d > M(0) ? outer : (d < M(0) ? -outer : M(0));
      return g * (std::fabs(d) < p ? d * inner : slope);
    });
  });
}

// PReLU, row by row of [N, C, S] (row r has channel r % C).
template <class T>
void prelu_typed(const T* x, const T* w, T* y, int64_t N, int64_t C, int64_t S) {
  parallel_for(0, N * C, std::max<int64_t>(1, 32768 / std::max<int64_t>(S, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   const T a = w[r % C];
                   const T* xr = x + r * S;
                   T* yr = y + r * S;
                   for (int64_t s = 0; s < S; ++s) yr[s] = xr[s] > T(0) ? xr[s] : a * xr[s];
                 }
               });
}

void prelu_cpu(const Tensor& x, const Tensor& weight, const Tensor& y, int64_t N, int64_t C,
               int64_t S) {
  if (x.dtype() == kDouble)
    return prelu_typed(x.data_ptr<double>(), weight.data_ptr<double>(), y.data_ptr<double>(), N, C,
                       S);
  BRASA_CHECK(x.dtype() == kFloat, "prelu: the CPU kernel takes float and double, got ", x.dtype());
  prelu_typed(x.data_ptr<float>(), weight.data_ptr<float>(), y.data_ptr<float>(), N, C, S);
}

// The input's gradient row by row, written while the slope's gradient
// sums grad * x where x <= 0 (channel_rows.h).
template <class T>
void prelu_backward_typed(const T* g, const T* x, const T* w, T* gx, T* gw, int64_t N, int64_t C,
                          int64_t S) {
  const auto sums = per_channel_sums<1>(N, C, S, [&](int64_t r, double* out) {
    const T a = w[r % C];
    const T* gr = g + r * S;
    const T* xr = x + r * S;
    T* dx = gx + r * S;
    out[0] = sum_in_lanes<T>(S, [&](int64_t s) {
      const bool positive = xr[s] > T(0);
      dx[s] = positive ? gr[s] : a * gr[s];
      return positive ? T(0) : gr[s] * xr[s];
    });
  });
  for (int64_t c = 0; c < C; ++c) gw[c] = static_cast<T>(sums[static_cast<size_t>(c)]);
}

void prelu_backward_cpu(const Tensor& grad, const Tensor& x, const Tensor& weight, const Tensor& gx,
                        const Tensor& gw, int64_t N, int64_t C, int64_t S) {
  if (x.dtype() == kDouble)
    return prelu_backward_typed(grad.data_ptr<double>(), x.data_ptr<double>(),
                                weight.data_ptr<double>(), gx.data_ptr<double>(),
                                gw.data_ptr<double>(), N, C, S);
  BRASA_CHECK(x.dtype() == kFloat, "prelu backward: the CPU kernel takes float and double, got ",
              x.dtype());
  prelu_backward_typed(grad.data_ptr<float>(), x.data_ptr<float>(), weight.data_ptr<float>(),
                       gx.data_ptr<float>(), gw.data_ptr<float>(), N, C, S);
}

}  // namespace

void register_activation_kernels() {
  register_kernel<GeluKernel>(kCPU, gelu_cpu);
  register_kernel<GeluBackwardKernel>(kCPU, gelu_backward_cpu);
  register_kernel<LeakyReluKernel>(kCPU, leaky_relu_cpu);
  register_kernel<LeakyReluBackwardKernel>(kCPU, leaky_relu_backward_cpu);
  register_kernel<ActivationKernel>(kCPU, activation_cpu);
  register_kernel<ActivationBackwardKernel>(kCPU, activation_backward_cpu);
  register_kernel<OutputActivationBackwardKernel>(kCPU, output_activation_backward_cpu);
  register_kernel<PointwiseLossKernel>(kCPU, pointwise_loss_cpu);
  register_kernel<PointwiseLossBackwardKernel>(kCPU, pointwise_loss_backward_cpu);
  register_kernel<PreluKernel>(kCPU, prelu_cpu);
  register_kernel<PreluBackwardKernel>(kCPU, prelu_backward_cpu);
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
