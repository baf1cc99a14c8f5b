// CPU kernels of the unary elementwise family (ops/unary.cpp has the rows:
// names, dtype rules and derivatives; ops/unary_math.h the scalar math).
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/elementwise_run.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/cpu/vec_math.h>
#include <brasa/ops/unary_math.h>

#include <algorithm>
#include <cmath>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

using detail::Elementwise;
using U = UnaryOp;

constexpr bool keeps_integers(U op) {
  return op == U::neg || op == U::abs || op == U::sign || op == U::relu || op == U::square;
}
constexpr bool identity_on_integers(U op) {
  return op == U::floor || op == U::ceil || op == U::round || op == U::trunc;
}

template <U op>
void math_op(Elementwise& e, ScalarType t) {
  if (isFloatingType(t)) {
    BRASA_DISPATCH_FLOATING_TYPES(t, e.op(), [&] {
      using M = opmath_t<scalar_t>;
      run<scalar_t, scalar_t>(e, [](M x) BRASA_INLINE_LAMBDA -> M { return unary_math<op>(x); });
    });
    return;
  }
  if constexpr (identity_on_integers(op)) {
    BRASA_DISPATCH_INTEGRAL_TYPES(
        t, e.op(), [&] { run<scalar_t, scalar_t>(e, [](scalar_t x) { return x; }); });
  } else if constexpr (keeps_integers(op)) {
    BRASA_CHECK(t != kBool, e.op(), ": not implemented for dtype Bool");
    BRASA_DISPATCH_INTEGRAL_TYPES(t, e.op(), [&] {
      using M = scalar_t;
      run<scalar_t, scalar_t>(e, [](M x) -> M { return static_cast<M>(unary_math<op>(x)); });
    });
  } else {
    BRASA_INTERNAL_ASSERT(false, e.op(), ": integral dtype ", t, " reached a float-only kernel");
  }
}

// tanh and sigmoid of float (and of half and bfloat16, computed in float)
// through vec_math's branch-free forms, which vectorize: with the libm calls
// the loop stayed scalar (tanh of a 28x28 image took 6.2 us, Zen 5).
template <U op>
void float_activation_op(Elementwise& e, ScalarType t) {
  static_assert(op == U::tanh || op == U::sigmoid);
  if (t == kDouble || !isFloatingType(t)) return math_op<op>(e, t);
  BRASA_DISPATCH_FLOATING_TYPES(t, e.op(), [&] {
    if constexpr (std::is_same_v<opmath_t<scalar_t>, float>) {
      // Forced inline: GCC once left this lambda called per element (4x
      // slower) after an unrelated change grew the file's loop templates.
      run<scalar_t, scalar_t>(e, [](float x) BRASA_INLINE_LAMBDA {
        return op == U::tanh ? fast_tanh(x) : fast_sigmoid(x);
      });
    }
  });
}

// exp of n floats at byte strides s[0] (out) and s[1] (in). Every value goes
// through exp_8, in groups of 8 (odd ones out through a small buffer), so the
// result does not depend on layout, alignment or threads; contiguous runs
// are read and written directly, with streaming stores for a large output.
void exp_floats(char* out, const char* in, const int64_t* s, int64_t n, bool stream) {
#ifdef BRASA_VEC_EXP8
  const auto through_buffer = [&](int64_t b, int64_t m) {
    alignas(32) float v[8] = {};
    for (int64_t k = 0; k < m; ++k) v[k] = *reinterpret_cast<const float*>(in + (b + k) * s[1]);
    _mm256_store_ps(v, exp_8(_mm256_load_ps(v)));
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
      for (i = head; i + 8 <= n; i += 8) _mm256_stream_ps(o + i, exp_8(_mm256_loadu_ps(x + i)));
      _mm_sfence();  // streaming stores are weakly ordered: publish them before the pool's join
    } else {
      for (; i + 8 <= n; i += 8) _mm256_storeu_ps(o + i, exp_8(_mm256_loadu_ps(x + i)));
    }
  }
  for (; i < n; i += 8) through_buffer(i, std::min<int64_t>(8, n - i));
#else
  for (int64_t i = 0; i < n; ++i)
    *reinterpret_cast<float*>(out + i * s[0]) =
        fast_exp(*reinterpret_cast<const float*>(in + i * s[1]));
#endif
}

// exp on float goes through the vectorized polynomial (also softmax's).
void exp_op(Elementwise& e, ScalarType t) {
  if (t != kFloat) return math_op<U::exp>(e, t);
  StridedLoop loop = make_loop(e);
  const bool stream =
      stream_output(loop.numel() * int64_t(sizeof(float)), loop.data(0), loop.data(1), nullptr);
  loop.run(
      [stream](char** d, const int64_t* s, int64_t n) { exp_floats(d[0], d[1], s, n, stream); });
  e.finish();
}

void predicate_op(Elementwise& e, U op) {
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(e.inputs()[0].dtype(), e.op(), [&] {
    // A bool input is read as its byte (0 or 1): GCC vectorizes those loads,
    // not loads of bool (logical_not of 1 Mi elements: 90 us scalar).
    using T = std::conditional_t<std::is_same_v<scalar_t, bool>, uint8_t, scalar_t>;
    using M = opmath_t<T>;
    if (op == U::logical_not) {
      run<bool, T>(e, [](M v) { return v == M(0); });
    } else if constexpr (std::is_floating_point_v<M>) {
      if (op == U::isnan)
        run<bool, T>(e, [](M v) { return v != v; });
      else if (op == U::isinf)
        run<bool, T>(e, [](M v) { return std::isinf(v); });
      else
        run<bool, T>(e, [](M v) { return std::isfinite(v); });
    } else {
      const bool value = op == U::isfinite;  // integers are never nan/inf
      run<bool, T>(e, [value](M) { return value; });
    }
  });
}

void bitwise_not_op(Elementwise& e, ScalarType t) {
  if (t == kBool) {
    run<bool, uint8_t>(e, [](uint8_t v) { return v == 0; });  // read as bytes: see predicate_op
    return;
  }
  BRASA_DISPATCH_INTEGRAL_TYPES(t, "bitwise_not", [&] {
    run<scalar_t, scalar_t>(e, [](scalar_t v) { return static_cast<scalar_t>(~v); });
  });
}

void unary_cpu(Elementwise& e, UnaryOp op, ScalarType t) {
  switch (op) {
    case U::neg:
      return math_op<U::neg>(e, t);
    case U::abs:
      return math_op<U::abs>(e, t);
    case U::sign:
      return math_op<U::sign>(e, t);
    case U::exp:
      return exp_op(e, t);
    case U::exp2:
      return math_op<U::exp2>(e, t);
    case U::expm1:
      return math_op<U::expm1>(e, t);
    case U::log:
      return math_op<U::log>(e, t);
    case U::log2:
      return math_op<U::log2>(e, t);
    case U::log10:
      return math_op<U::log10>(e, t);
    case U::log1p:
      return math_op<U::log1p>(e, t);
    case U::sqrt:
      return math_op<U::sqrt>(e, t);
    case U::rsqrt:
      return math_op<U::rsqrt>(e, t);
    case U::reciprocal:
      return math_op<U::reciprocal>(e, t);
    case U::sin:
      return math_op<U::sin>(e, t);
    case U::cos:
      return math_op<U::cos>(e, t);
    case U::tan:
      return math_op<U::tan>(e, t);
    case U::asin:
      return math_op<U::asin>(e, t);
    case U::acos:
      return math_op<U::acos>(e, t);
    case U::atan:
      return math_op<U::atan>(e, t);
    case U::sinh:
      return math_op<U::sinh>(e, t);
    case U::cosh:
      return math_op<U::cosh>(e, t);
    case U::tanh:
      return float_activation_op<U::tanh>(e, t);
    case U::sigmoid:
      return float_activation_op<U::sigmoid>(e, t);
    case U::relu:
      return math_op<U::relu>(e, t);
    case U::erf:
      return math_op<U::erf>(e, t);
    case U::erfinv:
      return math_op<U::erfinv>(e, t);
    case U::floor:
      return math_op<U::floor>(e, t);
    case U::ceil:
      return math_op<U::ceil>(e, t);
    case U::round:
      return math_op<U::round>(e, t);
    case U::trunc:
      return math_op<U::trunc>(e, t);
    case U::frac:
      return math_op<U::frac>(e, t);
    case U::square:
      return math_op<U::square>(e, t);
    case U::bitwise_not:
      return bitwise_not_op(e, t);
    case U::logical_not:
    case U::isnan:
    case U::isinf:
    case U::isfinite:
      return predicate_op(e, op);
    case U::count:
      break;
  }
  BRASA_INTERNAL_ASSERT(false, "unary_cpu: unknown op code ", int(op));
}

void nan_to_num_cpu(Elementwise& e, ScalarType t, double nan, double posinf, double neginf) {
  BRASA_DISPATCH_FLOATING_TYPES(t, "nan_to_num", [&] {
    using M = opmath_t<scalar_t>;
    const M n = static_cast<M>(nan), p = static_cast<M>(posinf), q = static_cast<M>(neginf);
    run<scalar_t, scalar_t>(
        e, [n, p, q](M v) { return v != v ? n : (v == INFINITY ? p : (v == -INFINITY ? q : v)); });
  });
}

void threshold_backward_cpu(Elementwise& e, ScalarType t) {
  BRASA_DISPATCH_FLOATING_TYPES(t, "threshold_backward", [&] {
    using M = opmath_t<scalar_t>;
    run<scalar_t, scalar_t, scalar_t>(e, [](M gv, M yv) { return yv > M(0) ? gv : M(0); });
  });
}

}  // namespace

void register_unary_kernels() {
  register_kernel<UnaryKernel>(kCPU, unary_cpu);
  register_kernel<NanToNumKernel>(kCPU, nan_to_num_cpu);
  register_kernel<ThresholdBackwardKernel>(kCPU, threshold_backward_cpu);
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
