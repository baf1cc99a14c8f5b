#include <brasa/autograd/record.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/cpu/vec_math.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/unary.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace brasa {
namespace {

using detail::Elementwise;

// What dtype a unary op computes in and returns.
enum class Kind {
  Keep,       // same dtype as the input (neg, abs, floor on ints is a copy)
  FloatOut,   // integers promote to the default float dtype (exp, sin, ...)
  FloatOnly,  // only floating inputs (frac)
  BoolOut,    // predicate (isnan, logical_not)
  Bits        // integral and bool only (bitwise_not)
};

template <class T>
T erfinv_impl(T y) {
  if (y <= T(-1)) return y == T(-1) ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN();
  if (y >= T(1)) return y == T(1) ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN();
  // Giles' single-precision approximation, then Newton steps on erf(x) - y.
  double w = -std::log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
    x = p * y;
  } else {
    w = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
    x = p * y;
  }
  const double two_over_sqrt_pi = 1.1283791670955126;
  for (int i = 0; i < 2; ++i) x -= (std::erf(x) - y) / (two_over_sqrt_pi * std::exp(-x * x));
  return static_cast<T>(x);
}

#define BRASA_UNARY_OPS(X)                                                                  \
  X(neg, Keep, -x)                                                                          \
  X(abs, Keep, x < M(0) ? -x : x)                                                           \
  X(sign, Keep, static_cast<M>((M(0) < x) - (x < M(0))))                                   \
  X(exp, FloatOut, std::exp(x))                                                             \
  X(exp2, FloatOut, std::exp2(x))                                                           \
  X(expm1, FloatOut, std::expm1(x))                                                         \
  X(log, FloatOut, std::log(x))                                                             \
  X(log2, FloatOut, std::log2(x))                                                           \
  X(log10, FloatOut, std::log10(x))                                                         \
  X(log1p, FloatOut, std::log1p(x))                                                         \
  X(sqrt, FloatOut, std::sqrt(x))                                                           \
  X(rsqrt, FloatOut, M(1) / std::sqrt(x))                                                   \
  X(reciprocal, FloatOut, M(1) / x)                                                         \
  X(sin, FloatOut, std::sin(x))                                                             \
  X(cos, FloatOut, std::cos(x))                                                             \
  X(tan, FloatOut, std::tan(x))                                                             \
  X(asin, FloatOut, std::asin(x))                                                           \
  X(acos, FloatOut, std::acos(x))                                                           \
  X(atan, FloatOut, std::atan(x))                                                           \
  X(sinh, FloatOut, std::sinh(x))                                                           \
  X(cosh, FloatOut, std::cosh(x))                                                           \
  X(tanh, FloatOut, std::tanh(x))                                                           \
  X(sigmoid, FloatOut, M(1) / (M(1) + std::exp(-x)))                                        \
  X(relu, Keep, x > M(0) ? x : (x != x ? x : M(0)))                                         \
  X(erf, FloatOut, std::erf(x))                                                             \
  X(erfinv, FloatOut, erfinv_impl<M>(x))                                                    \
  X(floor, Keep, std::floor(x))                                                             \
  X(ceil, Keep, std::ceil(x))                                                               \
  X(round, Keep, std::nearbyint(x))                                                         \
  X(trunc, Keep, std::trunc(x))                                                             \
  X(frac, FloatOnly, x - std::trunc(x))                                                     \
  X(square, Keep, x * x)

ScalarType out_dtype(const char* name, Kind k, ScalarType in) {
  switch (k) {
    case Kind::Keep: return in;
    case Kind::FloatOut: return isIntegralType(in, true) ? get_default_dtype() : in;
    case Kind::FloatOnly:
      BRASA_CHECK(isFloatingType(in), name, ": not implemented for dtype ", in, " (expected a floating tensor)");
      return in;
    case Kind::BoolOut: return kBool;
    case Kind::Bits:
      BRASA_CHECK(isIntegralType(in, true), name, ": only integral and bool tensors are supported, got ", in);
      return in;
  }
  return in;
}

template <class F>
Tensor float_unary(const char* name, Kind kind, const Tensor& x, const Tensor* out, bool inplace, const F& apply) {
  BRASA_CHECK(x.defined(), name, ": expected a defined tensor");
  ScalarType t = out_dtype(name, kind, x.dtype());
  Elementwise e(name, t, out, inplace);
  e.input(x, t).build();
  apply(e, t);
  return e.result();
}

// Integer inputs for "Keep" ops whose math is the identity on integers.
bool identity_on_ints(const char* name) {
  return !std::strcmp(name, "floor") || !std::strcmp(name, "ceil") || !std::strcmp(name, "round") ||
         !std::strcmp(name, "trunc");
}

#define BRASA_UNARY_IMPL(name, KIND, EXPR)                                                      \
  Tensor name##_impl(const Tensor& x, const Tensor* out, bool inplace) {                        \
    return float_unary(#name, Kind::KIND, x, out, inplace, [&](Elementwise& e, ScalarType t) {  \
      if (isFloatingType(t)) {                                                                  \
        BRASA_DISPATCH_FLOATING_TYPES(t, #name, [&] {                                           \
          using M = opmath_t<scalar_t>;                                                         \
          e.run<scalar_t, scalar_t>([](M x) -> M { return EXPR; });                            \
        });                                                                                     \
      } else if (identity_on_ints(#name)) {                                                     \
        BRASA_DISPATCH_INTEGRAL_TYPES(t, #name, [&] {                                           \
          e.run<scalar_t, scalar_t>([](scalar_t x) { return x; });                              \
        });                                                                                     \
      } else {                                                                                  \
        BRASA_CHECK(t != kBool, #name, ": not implemented for dtype Bool");                     \
        BRASA_DISPATCH_INTEGRAL_TYPES(t, #name, [&] {                                           \
          using M = scalar_t;                                                                   \
          e.run<scalar_t, scalar_t>([](M x) -> M { return static_cast<M>(EXPR); });            \
        });                                                                                     \
      }                                                                                         \
    });                                                                                         \
  }
BRASA_UNARY_OPS(BRASA_UNARY_IMPL)
#undef BRASA_UNARY_IMPL

// exp of n floats at byte strides s[0] (out) and s[1] (in). Every value goes
// through exp_8, in groups of 8 (odd ones out through a small buffer), so the
// result does not depend on layout, alignment or threads; contiguous runs
// are read and written directly, with streaming stores for a large output.
void exp_floats(char* out, const char* in, const int64_t* s, int64_t n, bool stream) {
#ifdef BRASA_VEC_EXP8
  const auto through_buffer = [&](int64_t b, int64_t m) {
    alignas(32) float v[8] = {};
    for (int64_t k = 0; k < m; ++k) v[k] = *reinterpret_cast<const float*>(in + (b + k) * s[1]);
    _mm256_store_ps(v, cpu::exp_8(_mm256_load_ps(v)));
    for (int64_t k = 0; k < m; ++k) *reinterpret_cast<float*>(out + (b + k) * s[0]) = v[k];
  };
  int64_t i = 0;
  if (s[0] == 4 && s[1] == 4) {
    float* o = reinterpret_cast<float*>(out);
    const float* x = reinterpret_cast<const float*>(in);
    if (stream) {
      const int64_t to_aligned = (32 - reinterpret_cast<uintptr_t>(o) % 32) % 32 / 4;
      const int64_t head = std::min<int64_t>(n, to_aligned);
      through_buffer(0, head);
      for (i = head; i + 8 <= n; i += 8)
        _mm256_stream_ps(o + i, cpu::exp_8(_mm256_loadu_ps(x + i)));
      _mm_sfence();  // streaming stores are weakly ordered: publish them before the pool's join
    } else {
      for (; i + 8 <= n; i += 8) _mm256_storeu_ps(o + i, cpu::exp_8(_mm256_loadu_ps(x + i)));
    }
  }
  for (; i < n; i += 8) through_buffer(i, std::min<int64_t>(8, n - i));
#else
  for (int64_t i = 0; i < n; ++i)
    *reinterpret_cast<float*>(out + i * s[0]) =
        cpu::fast_exp(*reinterpret_cast<const float*>(in + i * s[1]));
#endif
}

// exp on float goes through the vectorized polynomial (also softmax's).
Tensor exp_fast_impl(const Tensor& x, const Tensor* out, bool inplace) {
  if (x.dtype() != kFloat) return exp_impl(x, out, inplace);
  Elementwise e("exp", kFloat, out, inplace);
  e.input(x).build();
  cpu::StridedLoop& loop = e.loop();
  const bool stream = cpu::stream_output(loop.numel() * int64_t(sizeof(float)), loop.data(0),
                                         loop.data(1), nullptr);
  loop.run([stream](char** d, const int64_t* s, int64_t n) {
    exp_floats(d[0], d[1], s, n, stream);
  });
  e.finish();
  return e.result();
}

Tensor predicate(const char* name, const Tensor& x, const Tensor* out, bool inplace) {
  Elementwise e(name, kBool, out, inplace);
  e.input(x).build();
  std::string n = name;
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(x.dtype(), name, [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    if (n == "logical_not") {
      e.run<bool, T>([](M v) { return v == M(0); });
    } else if constexpr (std::is_floating_point_v<M>) {
      if (n == "isnan") e.run<bool, T>([](M v) { return v != v; });
      else if (n == "isinf") e.run<bool, T>([](M v) { return std::isinf(v); });
      else e.run<bool, T>([](M v) { return std::isfinite(v); });
    } else {
      bool value = n == "isfinite";  // integers are never nan/inf
      e.run<bool, T>([value](M) { return value; });
    }
  });
  return e.result();
}

Tensor bitwise_not_impl(const Tensor& x, const Tensor* out, bool inplace) {
  ScalarType t = out_dtype("bitwise_not", Kind::Bits, x.dtype());
  Elementwise e("bitwise_not", t, out, inplace);
  e.input(x).build();
  if (t == kBool) {
    e.run<bool, bool>([](bool v) { return !v; });
  } else {
    BRASA_DISPATCH_INTEGRAL_TYPES(t, "bitwise_not", [&] {
      e.run<scalar_t, scalar_t>([](scalar_t v) { return static_cast<scalar_t>(~v); });
    });
  }
  return e.result();
}

Tensor dispatch_unary(const char* name, const Tensor& x, const Tensor* out, bool inplace) {
  std::string n = name;
  if (n == "exp") return exp_fast_impl(x, out, inplace);
#define BRASA_UNARY_CASE(op, KIND, EXPR) \
  if (n == #op) return op##_impl(x, out, inplace);
  BRASA_UNARY_OPS(BRASA_UNARY_CASE)
#undef BRASA_UNARY_CASE
  if (n == "bitwise_not") return bitwise_not_impl(x, out, inplace);
  if (n == "logical_not" || n == "isnan" || n == "isinf" || n == "isfinite") return predicate(name, x, out, inplace);
  BRASA_INTERNAL_ASSERT(false, "unknown unary op ", name);
}

// ---- derivatives: grad of x from (grad, x, y = op(x)) ----
using autograd::BackwardName;
struct UnaryGrad {
  const char* op;
  BackwardName backward_name;
  bool uses_x, uses_y;  // what is saved for the formula
  Tensor (*formula)(const Tensor& g, const Tensor& x, const Tensor& y);
};
constexpr double kLn2 = 0.69314718055994530942, kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390, kSqrtPiOverTwo = 0.88622692545275801365;
const UnaryGrad unary_grads[] = {
    {"neg", BackwardName("NegBackward0"), false, false, [](const Tensor& g, const Tensor&, const Tensor&) { return neg(g); }},
    {"abs", BackwardName("AbsBackward0"), true, false, [](const Tensor& g, const Tensor& x, const Tensor&) { return g * sign(x); }},
    {"sign", BackwardName("SignBackward0"), false, false, [](const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); }},
    {"exp", BackwardName("ExpBackward0"), false, true, [](const Tensor& g, const Tensor&, const Tensor& y) { return g * y; }},
    {"exp2", BackwardName("Exp2Backward0"), false, true, [](const Tensor& g, const Tensor&, const Tensor& y) { return g * y * kLn2; }},
    {"expm1", BackwardName("Expm1Backward0"), false, true, [](const Tensor& g, const Tensor&, const Tensor& y) { return g * (y + 1); }},
    {"log", BackwardName("LogBackward0"), true, false, [](const Tensor& g, const Tensor& x, const Tensor&) { return g / x; }},
    {"log2", BackwardName("Log2Backward0"), true, false, [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x * kLn2); }},
    {"log10", BackwardName("Log10Backward0"), true, false, [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x * kLn10); }},
    {"log1p", BackwardName("Log1PBackward0"), true, false, [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x + 1); }},
    {"sqrt", BackwardName("SqrtBackward0"), false, true, [](const Tensor& g, const Tensor&, const Tensor& y) { return g / (y * 2); }},
    {"rsqrt", BackwardName("RsqrtBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) { return g * (y * y * y) * -0.5; }},
    {"reciprocal", BackwardName("ReciprocalBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) { return -(g * y * y); }},
    {"sin", BackwardName("SinBackward0"), true, false, [](const Tensor& g, const Tensor& x, const Tensor&) { return g * cos(x); }},
    {"cos", BackwardName("CosBackward0"), true, false, [](const Tensor& g, const Tensor& x, const Tensor&) { return -(g * sin(x)); }},
    {"tan", BackwardName("TanBackward0"), false, true, [](const Tensor& g, const Tensor&, const Tensor& y) { return g * (y * y + 1); }},
    {"asin", BackwardName("AsinBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g * rsqrt(1 - x * x); }},
    {"acos", BackwardName("AcosBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return -(g * rsqrt(1 - x * x)); }},
    {"atan", BackwardName("AtanBackward0"), true, false, [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x * x + 1); }},
    {"sinh", BackwardName("SinhBackward0"), true, false, [](const Tensor& g, const Tensor& x, const Tensor&) { return g * cosh(x); }},
    {"cosh", BackwardName("CoshBackward0"), true, false, [](const Tensor& g, const Tensor& x, const Tensor&) { return g * sinh(x); }},
    {"tanh", BackwardName("TanhBackward0"), false, true, [](const Tensor& g, const Tensor&, const Tensor& y) { return g * (1 - y * y); }},
    {"sigmoid", BackwardName("SigmoidBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) { return g * (y * (1 - y)); }},
    {"relu", BackwardName("ReluBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) { return detail::threshold_backward(g, y); }},
    {"erf", BackwardName("ErfBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g * exp(-(x * x)) * kTwoOverSqrtPi; }},
    {"erfinv", BackwardName("ErfinvBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) { return g * exp(y * y) * kSqrtPiOverTwo; }},
    {"floor", BackwardName("FloorBackward0"), false, false, [](const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); }},
    {"ceil", BackwardName("CeilBackward0"), false, false, [](const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); }},
    {"round", BackwardName("RoundBackward0"), false, false, [](const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); }},
    {"trunc", BackwardName("TruncBackward0"), false, false, [](const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); }},
    {"frac", BackwardName("FracBackward0"), false, false, [](const Tensor& g, const Tensor&, const Tensor&) { return g; }},
    {"square", BackwardName("SquareBackward0"), true, false, [](const Tensor& g, const Tensor& x, const Tensor&) { return g * x * 2; }},
};

const BackwardName kThresholdBackwardBackward("ThresholdBackwardBackward0");

const UnaryGrad* find_unary_grad(const char* name) {
  for (const auto& u : unary_grads)
    if (!std::strcmp(u.op, name)) return &u;
  return nullptr;
}

using UnaryImpl = Tensor (*)(const Tensor&, const Tensor*, bool);

Tensor unary_ad(const UnaryGrad* ug, UnaryImpl impl, const Tensor& x) {
  if (!ug) return impl(x, nullptr, false);
  autograd::Recorder r(ug->backward_name, x);
  Tensor y = impl(x, nullptr, false);
  if (r) {
    r.save(ug->uses_x ? x : Tensor(), ug->uses_y ? y : Tensor());
    r.finish(y, [f = ug->formula](autograd::FormulaNode& n, const autograd::variable_list& g) {
      return autograd::variable_list{f(g[0], n.saved(0), n.saved(1))};
    });
  }
  return y;
}

}  // namespace

#define BRASA_DEFINE_UNARY(name, ...)                                                         \
  Tensor name(const Tensor& x) {                                                              \
    static const UnaryGrad* grad = find_unary_grad(#name);                                    \
    UnaryImpl impl = name##_impl;                                                             \
    if (!std::strcmp(#name, "exp")) impl = exp_fast_impl;                                     \
    return unary_ad(grad, impl, x);                                                           \
  }                                                                                           \
  Tensor& name##_out(Tensor& out, const Tensor& x) {                                          \
    dispatch_unary(#name, x, &out, false);                                                    \
    return out;                                                                               \
  }
BRASA_UNARY_OPS(BRASA_DEFINE_UNARY)
#undef BRASA_DEFINE_UNARY
#define BRASA_DEFINE_PREDICATE(name)                                                          \
  Tensor name(const Tensor& x) { return dispatch_unary(#name, x, nullptr, false); }           \
  Tensor& name##_out(Tensor& out, const Tensor& x) {                                          \
    dispatch_unary(#name, x, &out, false);                                                    \
    return out;                                                                               \
  }
BRASA_DEFINE_PREDICATE(logical_not)
BRASA_DEFINE_PREDICATE(bitwise_not)
BRASA_DEFINE_PREDICATE(isnan)
BRASA_DEFINE_PREDICATE(isinf)
BRASA_DEFINE_PREDICATE(isfinite)
#undef BRASA_DEFINE_PREDICATE

// relu's gradient in one pass: g where y > 0, else 0. Linear in g, so its
// own gradient is the same masking of the incoming one.
Tensor detail::threshold_backward(const Tensor& g, const Tensor& y) {
  autograd::Recorder r(kThresholdBackwardBackward, g);
  Elementwise e("threshold_backward", g.dtype());
  e.input(g).input(y, g.dtype()).build();
  BRASA_DISPATCH_FLOATING_TYPES(g.dtype(), "threshold_backward", [&] {
    using M = opmath_t<scalar_t>;
    e.run<scalar_t, scalar_t, scalar_t>([](M gv, M yv) { return yv > M(0) ? gv : M(0); });
  });
  Tensor out = e.result();
  if (r) r.save(y).finish(out, [](autograd::FormulaNode& n, const autograd::variable_list& gg) {
    return autograd::variable_list{threshold_backward(gg[0], n.saved(0))};
  });
  return out;
}

Tensor negative(const Tensor& x) { return neg(x); }
Tensor absolute(const Tensor& x) { return abs(x); }

Tensor& detail::unary_inplace(const char* name, Tensor& x) {
  const UnaryGrad* ug = find_unary_grad(name);
  if (!ug) {
    dispatch_unary(name, x, &x, true);
    return x;
  }
  return autograd::inplace(
      name, x, [&] { dispatch_unary(name, x, &x, true); },
      [&](const Tensor& old) {
        UnaryImpl impl = nullptr;
#define BRASA_UNARY_PICK(op, KIND, EXPR) \
  if (!std::strcmp(name, #op)) impl = op##_impl;
        BRASA_UNARY_OPS(BRASA_UNARY_PICK)
#undef BRASA_UNARY_PICK
        return unary_ad(ug, impl, old);
      });
}

static Tensor nan_to_num_kernel(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                                std::optional<double> neginf);
static const autograd::BackwardName kNanToNumBackward("NanToNumBackward0");
Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  if (!x.is_floating_point()) return clone(x);
  autograd::Recorder r(kNanToNumBackward, x);
  Tensor y = nan_to_num_kernel(x, nan, posinf, neginf);
  if (r) r.save(x).finish(y, [](autograd::FormulaNode& n, const autograd::variable_list& g) {
    return autograd::variable_list{g[0] * isfinite(n.saved(0))};
  });
  return y;
}

static Tensor nan_to_num_kernel(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                                std::optional<double> neginf) {
  Elementwise e("nan_to_num", x.dtype());
  e.input(x).build();
  BRASA_DISPATCH_FLOATING_TYPES(x.dtype(), "nan_to_num", [&] {
    using M = opmath_t<scalar_t>;
    // Defaults: nan -> 0, +/-inf -> the dtype's largest finite magnitude.
    double big = x.dtype() == kHalf ? 65504.0 : x.dtype() == kBFloat16 ? 3.3895313892515355e38
                 : x.dtype() == kFloat ? static_cast<double>(std::numeric_limits<float>::max())
                                       : std::numeric_limits<double>::max();
    const M n = static_cast<M>(nan.value_or(0.0)), p = static_cast<M>(posinf.value_or(big)),
            q = static_cast<M>(neginf.value_or(-big));
    e.run<scalar_t, scalar_t>([n, p, q](M v) { return v != v ? n : (v == INFINITY ? p : (v == -INFINITY ? q : v)); });
  });
  return e.result();
}

}  // namespace brasa
