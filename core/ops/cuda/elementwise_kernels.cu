// The elementwise CUDA kernels: fill, copy with dtype conversion, binary
// arithmetic, comparisons, bitwise ops, unary math, where and
// threshold_backward, over the strided loops of loop.h. Each op is a small
// functor run by one grid-stride kernel (device_types.cuh).
#include <brasa/ops/cuda/device_types.cuh>
#include <brasa/ops/kernels/elementwise_ops.h>

#include <cmath>
#include <limits>

namespace brasa::cuda::kernels {
namespace {

template <class T>
struct FillOp {
  T value;
  __device__ void operator()(char* const* p) const { *reinterpret_cast<T*>(p[0]) = value; }
};

template <class D, class S>
struct CopyOp {
  __device__ void operator()(char* const* p) const {
    using A = Acc<S>;
    const A v = load<S>(p[1]);
    if constexpr (std::is_same_v<D, S>)
      *reinterpret_cast<D*>(p[0]) = *reinterpret_cast<const S*>(p[1]);
    else if constexpr (is_reduced_float<D> || std::is_same_v<D, bool>)
      store<D>(p[0], v);
    else
      store<D>(p[0], static_cast<D>(v));
  }
};

template <class A>
__device__ bool negative(A v) {
  if constexpr (std::is_signed_v<A>)
    return v < A(0);
  else
    return false;
}

template <class A>
__device__ A integer_div_trunc(A a, A b) {
  if (b == 0) return A(-1);  // as PyTorch's CUDA kernels: no trap on the device
  if constexpr (std::is_signed_v<A>)
    if (b == A(-1)) return A(0) - a;  // wraps for the minimum instead of trapping
  return a / b;
}

template <class A>
__device__ A integer_mod(A a, A b) {
  if (b == 0) return A(-1);
  if constexpr (std::is_signed_v<A>)
    if (b == A(-1)) return A(0);
  return a % b;
}

template <class A>
__device__ A integer_pow(A base, A exp) {
  if constexpr (std::is_signed_v<A>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp & 1) ? A(-1) : A(1);
      return 0;
    }
  }
  A r = 1;
  while (exp) {
    if (exp & 1) r = static_cast<A>(r * base);
    base = static_cast<A>(base * base);
    exp >>= 1;
  }
  return r;
}

template <class T>
struct BinaryArith {
  BinaryOp op;
  Acc<T> alpha;
  __device__ void operator()(char* const* p) const {
    using A = Acc<T>;
    const A a = load<T>(p[1]), b = load<T>(p[2]);
    A r{};
    if constexpr (std::is_same_v<T, bool>) {
      switch (op) {
        case BinaryOp::Add:
          r = a || (alpha && b);
          break;
        case BinaryOp::Mul:
          r = a && b;
          break;
        case BinaryOp::Minimum:
          r = a && b;
          break;
        case BinaryOp::Maximum:
          r = a || b;
          break;
        default:
          r = a;
          break;  // rejected on the host for bool
      }
    } else if constexpr (std::is_floating_point_v<A>) {
      switch (op) {
        case BinaryOp::Add:
          r = a + alpha * b;
          break;
        case BinaryOp::Mul:
          r = a * b;
          break;
        case BinaryOp::Div:
          r = a / b;
          break;
        case BinaryOp::DivTrunc:
          r = trunc(a / b);
          break;
        case BinaryOp::DivFloor: {
          // Rounds the exact quotient down: (a - fmod(a, b)) / b is an
          // integer up to rounding, corrected by one when the signs differ.
          if (b == 0) {
            r = a / b;
            break;
          }
          const A m = fmod(a, b);
          A q = (a - m) / b;
          if (m != 0 && ((b < 0) != (m < 0))) q -= 1;
          if (q != 0) {
            A f = floor(q);
            if (q - f > A(0.5)) f += 1;
            r = f;
          } else {
            r = copysign(A(0), a / b);
          }
          break;
        }
        case BinaryOp::Pow:
          r = pow(a, b);
          break;
        case BinaryOp::Atan2:
          r = atan2(a, b);
          break;
        case BinaryOp::Fmod:
          r = fmod(a, b);
          break;
        case BinaryOp::Remainder: {
          A m = fmod(a, b);
          if (m != 0 && ((m < 0) != (b < 0))) m += b;
          r = m;
          break;
        }
        case BinaryOp::Minimum:
          r = (a != a) ? a : (b != b) ? b : (a < b ? a : b);
          break;
        case BinaryOp::Maximum:
          r = (a != a) ? a : (b != b) ? b : (a > b ? a : b);
          break;
      }
    } else {
      switch (op) {
        case BinaryOp::Add:
          r = static_cast<A>(a + alpha * b);
          break;
        case BinaryOp::Mul:
          r = static_cast<A>(a * b);
          break;
        case BinaryOp::Div:
        case BinaryOp::DivTrunc:
          r = integer_div_trunc(a, b);
          break;
        case BinaryOp::DivFloor: {
          r = integer_div_trunc(a, b);
          if (b != 0 && integer_mod(a, b) != 0 && negative(a) != negative(b))
            r = static_cast<A>(r - 1);
          break;
        }
        case BinaryOp::Pow:
          r = integer_pow(a, b);
          break;
        case BinaryOp::Atan2:
          r = static_cast<A>(atan2(double(a), double(b)));
          break;
        case BinaryOp::Fmod:
          r = integer_mod(a, b);
          break;
        case BinaryOp::Remainder: {
          A m = integer_mod(a, b);
          if (b != 0 && m != 0 && negative(m) != negative(b)) m = static_cast<A>(m + b);
          r = m;
          break;
        }
        case BinaryOp::Minimum:
          r = a < b ? a : b;
          break;
        case BinaryOp::Maximum:
          r = a > b ? a : b;
          break;
      }
    }
    store<T>(p[0], r);
  }
};

template <class T>
struct Compare {
  CompareOp op;
  __device__ void operator()(char* const* p) const {
    using A = Acc<T>;
    const A a = load<T>(p[1]), b = load<T>(p[2]);
    bool r = false;
    switch (op) {
      case CompareOp::Eq:
        r = a == b;
        break;
      case CompareOp::Ne:
        r = a != b;
        break;
      case CompareOp::Lt:
        r = a < b;
        break;
      case CompareOp::Le:
        r = a <= b;
        break;
      case CompareOp::Gt:
        r = a > b;
        break;
      case CompareOp::Ge:
        r = a >= b;
        break;
      case CompareOp::LogicalAnd:
        r = (a != A(0)) && (b != A(0));
        break;
      case CompareOp::LogicalOr:
        r = (a != A(0)) || (b != A(0));
        break;
      case CompareOp::LogicalXor:
        r = (a != A(0)) != (b != A(0));
        break;
    }
    *reinterpret_cast<bool*>(p[0]) = r;
  }
};

template <class T>
struct Bitwise {
  BitwiseOp op;
  __device__ void operator()(char* const* p) const {
    const T a = *reinterpret_cast<const T*>(p[1]), b = *reinterpret_cast<const T*>(p[2]);
    T r;
    switch (op) {
      case BitwiseOp::And:
        r = static_cast<T>(a & b);
        break;
      case BitwiseOp::Or:
        r = static_cast<T>(a | b);
        break;
      default:
        r = static_cast<T>(a ^ b);
        break;
    }
    *reinterpret_cast<T*>(p[0]) = r;
  }
};

template <class A>
__device__ A float_math(UnaryOp op, A x) {
  switch (op) {
    case UnaryOp::neg:
      return -x;
    case UnaryOp::abs:
      return fabs(x);
    case UnaryOp::sign:
      return x != x ? x : A((A(0) < x) - (x < A(0)));
    case UnaryOp::exp:
      return exp(x);
    case UnaryOp::exp2:
      return exp2(x);
    case UnaryOp::expm1:
      return expm1(x);
    case UnaryOp::log:
      return log(x);
    case UnaryOp::log2:
      return log2(x);
    case UnaryOp::log10:
      return log10(x);
    case UnaryOp::log1p:
      return log1p(x);
    case UnaryOp::sqrt:
      return sqrt(x);
    case UnaryOp::rsqrt:
      return rsqrt(x);
    case UnaryOp::reciprocal:
      return A(1) / x;
    case UnaryOp::sin:
      return sin(x);
    case UnaryOp::cos:
      return cos(x);
    case UnaryOp::tan:
      return tan(x);
    case UnaryOp::asin:
      return asin(x);
    case UnaryOp::acos:
      return acos(x);
    case UnaryOp::atan:
      return atan(x);
    case UnaryOp::sinh:
      return sinh(x);
    case UnaryOp::cosh:
      return cosh(x);
    case UnaryOp::tanh:
      return tanh(x);
    case UnaryOp::sigmoid:
      return A(1) / (A(1) + exp(-x));
    case UnaryOp::relu:
      return x > A(0) || x != x ? x : A(0);
    case UnaryOp::erf:
      return erf(x);
    case UnaryOp::erfinv:
      return erfinv(x);
    case UnaryOp::floor:
      return floor(x);
    case UnaryOp::ceil:
      return ceil(x);
    case UnaryOp::round:
      return rint(x);
    case UnaryOp::trunc:
      return trunc(x);
    case UnaryOp::frac:
      return x - trunc(x);
    case UnaryOp::square:
      return x * x;
    default:
      return x;
  }
}

template <class A>
__device__ A integer_math(UnaryOp op, A x) {
  switch (op) {
    case UnaryOp::neg:
      return static_cast<A>(A(0) - x);
    case UnaryOp::abs:
      return negative(x) ? static_cast<A>(A(0) - x) : x;
    case UnaryOp::sign:
      return static_cast<A>((A(0) < x) - negative(x));
    case UnaryOp::relu:
      return x > A(0) ? x : A(0);
    case UnaryOp::square:
      return static_cast<A>(x * x);
    case UnaryOp::frac:
      return A(0);
    case UnaryOp::bitwise_not:
      if constexpr (std::is_same_v<A, bool>)
        return !x;
      else
        return static_cast<A>(~x);
    default:
      return x;  // floor, ceil, round, trunc: integers are unchanged
  }
}

template <class T>
struct Unary {
  UnaryOp op;
  __device__ void operator()(char* const* p) const {
    using A = Acc<T>;
    const A x = load<T>(p[1]);
    if constexpr (std::is_floating_point_v<A>)
      store<T>(p[0], float_math<A>(op, x));
    else
      store<T>(p[0], integer_math<A>(op, x));
  }
};

template <class T>
struct Predicate {
  UnaryOp op;
  __device__ void operator()(char* const* p) const {
    using A = Acc<T>;
    const A x = load<T>(p[1]);
    bool r;
    if (op == UnaryOp::logical_not) {
      r = x == A(0);
    } else if constexpr (std::is_floating_point_v<A>) {
      r = op == UnaryOp::isnan ? x != x : op == UnaryOp::isinf ? isinf(x) : isfinite(x);
    } else {
      r = op == UnaryOp::isfinite;
    }
    *reinterpret_cast<bool*>(p[0]) = r;
  }
};

template <class T>
struct Where {
  __device__ void operator()(char* const* p) const {
    const bool c = *reinterpret_cast<const bool*>(p[2]);
    *reinterpret_cast<T*>(p[0]) = *reinterpret_cast<const T*>(c ? p[1] : p[3]);
  }
};

template <class T>
struct ThresholdBackward {
  __device__ void operator()(char* const* p) const {
    using A = Acc<T>;
    store<T>(p[0], load<T>(p[2]) > A(0) ? load<T>(p[1]) : A(0));
  }
};

template <class T>
struct Lerp {  // (out, start, end, weight), as the CPU: exact at both ends
  __device__ void operator()(char* const* p) const {
    using A = Acc<T>;
    const A st = load<T>(p[1]), en = load<T>(p[2]), w = load<T>(p[3]);
    store<T>(p[0], (w < A(0.5) && w > A(-0.5)) ? st + w * (en - st) : en - (en - st) * (A(1) - w));
  }
};

template <class T>
struct Addc {  // (out, self, t1, t2): self + value * t1 * t2 (or t1 / t2)
  Acc<T> value;
  bool div;
  __device__ void operator()(char* const* p) const {
    const Acc<T> a = load<T>(p[2]), b = load<T>(p[3]);
    store<T>(p[0], load<T>(p[1]) + value * (div ? a / b : a * b));
  }
};

template <class T>
struct Clamp {  // NaN stays NaN
  bool has_lo, has_hi;
  Acc<T> lo, hi;
  __device__ void operator()(char* const* p) const {
    Acc<T> x = load<T>(p[1]);
    if (has_lo && x < lo) x = lo;
    if (has_hi && hi < x) x = hi;
    store<T>(p[0], x);
  }
};

template <class T>
struct IsClose {  // (bool out, a, b)
  double rtol, atol;
  bool equal_nan;
  __device__ void operator()(char* const* p) const {
    const double x = static_cast<double>(load<T>(p[1])), y = static_cast<double>(load<T>(p[2]));
    bool close;
    if (x == y)
      close = true;
    else if (x != x || y != y)
      close = equal_nan && x != x && y != y;
    else if (isinf(x) || isinf(y))
      close = false;
    else
      close = fabs(x - y) <= atol + rtol * fabs(y);
    *reinterpret_cast<bool*>(p[0]) = close;
  }
};

template <class T>
struct NanToNum {
  Acc<T> nan, posinf, neginf;
  __device__ void operator()(char* const* p) const {
    using A = Acc<T>;
    const A v = load<T>(p[1]);
    const A inf = A(INFINITY);
    store<T>(p[0], v != v ? nan : (v == inf ? posinf : (v == -inf ? neginf : v)));
  }
};

// The element size with which T's flat loops are vectorised (launch<>);
// 1-byte types are not (16 copies of the op per thread cost more to build
// than they gain).
template <class T>
constexpr int kVec = sizeof(T) >= 2 ? int(sizeof(T)) : 0;

template <class T>
T number_as(Number v) {
  if constexpr (std::is_same_v<T, bool>)
    return v.i != 0 || v.f != 0;
  else if constexpr (std::is_same_v<T, __half>)
    return __double2half(v.f);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __double2bfloat16(v.f);
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v.f);
  else
    return static_cast<T>(v.i);
}

}  // namespace

void launch_fill(const Loop& l, int dtype, Number value, cudaStream_t s) {
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    launch<1, FillOp<T>, kVec<T>>(l, FillOp<T>{number_as<T>(value)}, s);
  });
}

void launch_copy(const Loop& l, int dst_dtype, int src_dtype, cudaStream_t s) {
  dispatch(dst_dtype, [&](auto dst_tag) {
    dispatch(src_dtype, [&](auto src_tag) {
      using D = decltype(dst_tag);
      using S = decltype(src_tag);
      launch<2, CopyOp<D, S>, std::is_same_v<D, S> ? kVec<D> : 0>(l, CopyOp<D, S>{}, s);
    });
  });
}

void launch_binary(const Loop& l, int op, int dtype, Number alpha, cudaStream_t s) {
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = Acc<T>;
    const A a = std::is_floating_point_v<A> ? static_cast<A>(alpha.f) : static_cast<A>(alpha.i);
    launch<3, BinaryArith<T>, kVec<T>>(l, BinaryArith<T>{static_cast<BinaryOp>(op), a}, s);
  });
}

void launch_compare(const Loop& l, int op, int dtype, cudaStream_t s) {
  dispatch(dtype,
           [&](auto tag) { launch<3>(l, Compare<decltype(tag)>{static_cast<CompareOp>(op)}, s); });
}

void launch_bitwise(const Loop& l, int op, int dtype, cudaStream_t s) {
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) launch<3>(l, Bitwise<T>{static_cast<BitwiseOp>(op)}, s);
  });
}

void launch_unary(const Loop& l, int op, int dtype, int in_dtype, cudaStream_t s) {
  const auto u = static_cast<UnaryOp>(op);
  if (u == UnaryOp::logical_not || u == UnaryOp::isnan || u == UnaryOp::isinf ||
      u == UnaryOp::isfinite) {
    dispatch(in_dtype, [&](auto tag) { launch<2>(l, Predicate<decltype(tag)>{u}, s); });
    return;
  }
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    launch<2, Unary<T>, kVec<T>>(l, Unary<T>{u}, s);
  });
}

void launch_where(const Loop& l, int dtype, cudaStream_t s) {
  dispatch(dtype, [&](auto tag) { launch<4>(l, Where<decltype(tag)>{}, s); });
}

void launch_threshold_backward(const Loop& l, int dtype, cudaStream_t s) {
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    launch<3, ThresholdBackward<T>, kVec<T>>(l, ThresholdBackward<T>{}, s);
  });
}

template <class T>
constexpr bool is_floating = std::is_floating_point_v<T> || is_reduced_float<T>;

// A Number as the arithmetic type of T.
template <class T>
Acc<T> acc_of(Number v) {
  if constexpr (std::is_floating_point_v<Acc<T>>)
    return static_cast<Acc<T>>(v.f);
  else
    return static_cast<Acc<T>>(v.i);
}

void launch_lerp(const Loop& l, int dtype, cudaStream_t s) {
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating<T>) launch<4>(l, Lerp<T>{}, s);
  });
}

void launch_addc(const Loop& l, int dtype, Number value, bool div, cudaStream_t s) {
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>)
      launch<4, Addc<T>, kVec<T>>(l, Addc<T>{acc_of<T>(value), div}, s);
  });
}

void launch_clamp(const Loop& l, int dtype, bool has_lo, Number lo, bool has_hi, Number hi,
                  cudaStream_t s) {
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>)
      launch<2>(l, Clamp<T>{has_lo, has_hi, acc_of<T>(lo), acc_of<T>(hi)}, s);
  });
}

void launch_isclose(const Loop& l, int dtype, double rtol, double atol, bool equal_nan,
                    cudaStream_t s) {
  dispatch(dtype, [&](auto tag) {
    launch<3>(l, IsClose<decltype(tag)>{rtol, atol, equal_nan}, s);
  });
}

void launch_nan_to_num(const Loop& l, int dtype, double nan, double posinf, double neginf,
                       cudaStream_t s) {
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = Acc<T>;
    if constexpr (is_floating<T>) launch<2>(l, NanToNum<T>{A(nan), A(posinf), A(neginf)}, s);
  });
}

}  // namespace brasa::cuda::kernels
