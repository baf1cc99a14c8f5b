#include <brasa/autograd/record.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/complex.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/activation.h>
#include <brasa/ops/kernels/elementwise.h>
#include <brasa/ops/unary.h>

#include <cmath>
#include <limits>

namespace brasa {
namespace {

using autograd::BackwardName;
using detail::Elementwise;

// What dtype a unary op computes in and returns.
enum class Kind {
  Keep,       // same dtype as the input (neg, abs, floor on ints is a copy)
  FloatOut,   // integers promote to the default float dtype (exp, sin, ...)
  FloatOnly,  // only floating inputs (frac)
  BoolOut,    // predicate (isnan, logical_not)
  Bits        // integral and bool only (bitwise_not)
};

ScalarType out_dtype(const char* name, Kind k, ScalarType in) {
  switch (k) {
    case Kind::Keep:
      return in;
    case Kind::FloatOut:
      return isIntegralType(in, true) ? get_default_dtype() : in;
    case Kind::FloatOnly:
      BRASA_CHECK(isFloatingType(in), name, ": not implemented for dtype ", in,
                  " (expected a floating tensor)");
      return in;
    case Kind::BoolOut:
      return kBool;
    case Kind::Bits:
      BRASA_CHECK(isIntegralType(in, true), name,
                  ": only integral and bool tensors are supported, got ", in);
      return in;
  }
  return in;
}

// One row per unary op, in UnaryOp's order: its name, dtype rule, and the
// derivative (grad of x from the incoming grad g, x and y = op(x); `uses_x`
// and `uses_y` say what the formula reads, so what is saved). The scalar
// math of each op is unary_math<op> in ops/unary_math.h, the one piece a
// device's kernel instantiates.
struct UnaryRow {
  const char* name;
  Kind kind;
  BackwardName backward_name;
  bool uses_x, uses_y;
  Tensor (*formula)(const Tensor& g, const Tensor& x, const Tensor& y);  // null: not differentiable
};
// sigmoid's (tanh's) gradient from its output y: one pass where the device
// has the kernel and no graph of the gradient is being built, the formula's
// three ops otherwise.
Tensor output_activation_backward(const Tensor& g, const Tensor& y, OutputActivation a) {
  if (!autograd::GradMode::is_enabled() && isFloatingType(g.dtype()) &&
      has_kernel<OutputActivationBackwardKernel>(g.device())) {
    Elementwise e(a == OutputActivation::Sigmoid ? "sigmoid_backward" : "tanh_backward", g.dtype());
    e.input(g).input(y, g.dtype()).build();
    kernel<OutputActivationBackwardKernel>(e.device())(e, g.dtype(), a);
    return e.result();
  }
  return a == OutputActivation::Sigmoid ? g * (y * (1 - y)) : g * (1 - y * y);
}

constexpr double kLn2 = 0.69314718055994530942, kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390, kSqrtPiOverTwo = 0.88622692545275801365;
// Predicates and bitwise_not have no derivative; their rows name no backward
// node (a BackwardName registers itself for the gradcheck table).
const char* const kNotDifferentiable = nullptr;
const UnaryRow unary_rows[] = {
    {"neg", Kind::Keep, BackwardName("NegBackward0"), false, false,
     [](const Tensor& g, const Tensor&, const Tensor&) { return neg(g); }},
    {"abs", Kind::Keep, BackwardName("AbsBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g * sign(x); }},
    {"sign", Kind::Keep, BackwardName("SignBackward0"), false, false,
     [](const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); }},
    {"exp", Kind::FloatOut, BackwardName("ExpBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) { return g * y; }},
    {"exp2", Kind::FloatOut, BackwardName("Exp2Backward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) { return g * y * kLn2; }},
    {"expm1", Kind::FloatOut, BackwardName("Expm1Backward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) { return g * (y + 1); }},
    {"log", Kind::FloatOut, BackwardName("LogBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g / x; }},
    {"log2", Kind::FloatOut, BackwardName("Log2Backward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x * kLn2); }},
    {"log10", Kind::FloatOut, BackwardName("Log10Backward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x * kLn10); }},
    {"log1p", Kind::FloatOut, BackwardName("Log1PBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x + 1); }},
    {"sqrt", Kind::FloatOut, BackwardName("SqrtBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) { return g / (y * 2); }},
    {"rsqrt", Kind::FloatOut, BackwardName("RsqrtBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) { return g * (y * y * y) * -0.5; }},
    {"reciprocal", Kind::FloatOut, BackwardName("ReciprocalBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) { return -(g * y * y); }},
    {"sin", Kind::FloatOut, BackwardName("SinBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g * cos(x); }},
    {"cos", Kind::FloatOut, BackwardName("CosBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return -(g * sin(x)); }},
    {"tan", Kind::FloatOut, BackwardName("TanBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) { return g * (y * y + 1); }},
    {"asin", Kind::FloatOut, BackwardName("AsinBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g * rsqrt(1 - x * x); }},
    {"acos", Kind::FloatOut, BackwardName("AcosBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return -(g * rsqrt(1 - x * x)); }},
    {"atan", Kind::FloatOut, BackwardName("AtanBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x * x + 1); }},
    {"sinh", Kind::FloatOut, BackwardName("SinhBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g * cosh(x); }},
    {"cosh", Kind::FloatOut, BackwardName("CoshBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g * sinh(x); }},
    {"tanh", Kind::FloatOut, BackwardName("TanhBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) {
       return output_activation_backward(g, y, OutputActivation::Tanh);
     }},
    {"sigmoid", Kind::FloatOut, BackwardName("SigmoidBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) {
       return output_activation_backward(g, y, OutputActivation::Sigmoid);
     }},
    {"relu", Kind::Keep, BackwardName("ReluBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) {
       return detail::threshold_backward(g, y);
     }},
    {"erf", Kind::FloatOut, BackwardName("ErfBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) {
       return g * exp(-(x * x)) * kTwoOverSqrtPi;
     }},
    {"erfinv", Kind::FloatOut, BackwardName("ErfinvBackward0"), false, true,
     [](const Tensor& g, const Tensor&, const Tensor& y) {
       return g * exp(y * y) * kSqrtPiOverTwo;
     }},
    {"floor", Kind::Keep, BackwardName("FloorBackward0"), false, false,
     [](const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); }},
    {"ceil", Kind::Keep, BackwardName("CeilBackward0"), false, false,
     [](const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); }},
    {"round", Kind::Keep, BackwardName("RoundBackward0"), false, false,
     [](const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); }},
    {"trunc", Kind::Keep, BackwardName("TruncBackward0"), false, false,
     [](const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); }},
    {"frac", Kind::FloatOnly, BackwardName("FracBackward0"), false, false,
     [](const Tensor& g, const Tensor&, const Tensor&) { return g; }},
    {"square", Kind::Keep, BackwardName("SquareBackward0"), true, false,
     [](const Tensor& g, const Tensor& x, const Tensor&) { return g * x * 2; }},
    {"logical_not", Kind::BoolOut, BackwardName(kNotDifferentiable), false, false, nullptr},
    {"bitwise_not", Kind::Bits, BackwardName(kNotDifferentiable), false, false, nullptr},
    {"isnan", Kind::BoolOut, BackwardName(kNotDifferentiable), false, false, nullptr},
    {"isinf", Kind::BoolOut, BackwardName(kNotDifferentiable), false, false, nullptr},
    {"isfinite", Kind::BoolOut, BackwardName(kNotDifferentiable), false, false, nullptr},
};
static_assert(sizeof(unary_rows) / sizeof(unary_rows[0]) == size_t(UnaryOp::count),
              "one row per UnaryOp, in its order");

const UnaryRow& row(UnaryOp op) { return unary_rows[static_cast<int>(op)]; }

const BackwardName kThresholdBackwardBackward("ThresholdBackwardBackward0");

// The forward without autograd: into a new tensor, into `out`, or in place.
Tensor unary_kernel(UnaryOp op, const Tensor& x, const Tensor* out, bool inplace) {
  const UnaryRow& r = row(op);
  BRASA_CHECK(x.defined(), r.name, ": expected a defined tensor");
  BRASA_CHECK(!x.is_complex(), r.name, ": not implemented for dtype ", x.dtype());
  ScalarType t = out_dtype(r.name, r.kind, x.dtype());
  Elementwise e(r.name, r.kind == Kind::BoolOut ? kBool : t, out, inplace);
  // Predicates read the input in its own dtype.
  if (r.kind == Kind::BoolOut)
    e.input(x).build();
  else
    e.input(x, t).build();
  kernel<UnaryKernel>(e.device())(e, op, t);
  return e.result();
}

Tensor unary_ad(UnaryOp op, const Tensor& x) {
  if (x.defined() && x.is_complex()) {  // the unary ops complex tensors have (complex.h)
    if (op == UnaryOp::neg) return view_as_complex(neg(view_as_real(x)));
    if (op == UnaryOp::abs) return detail::complex_abs(x);
    Tensor z = detail::complex_unary(row(op).name, x);
    if (z.defined()) return z;
  }
  const UnaryRow& u = row(op);
  if (!u.formula) return unary_kernel(op, x, nullptr, false);
  autograd::Recorder r(u.backward_name, x);
  Tensor y = unary_kernel(op, x, nullptr, false);
  if (r) {
    r.save(u.uses_x ? x : Tensor(), u.uses_y ? y : Tensor());
    r.finish(y, [f = u.formula](autograd::FormulaNode& n, const autograd::variable_list& g) {
      return autograd::variable_list{f(g[0], n.saved(0), n.saved(1))};
    });
  }
  return y;
}

}  // namespace

#define BRASA_DEFINE_UNARY(name)                                      \
  Tensor name(const Tensor& x) { return unary_ad(UnaryOp::name, x); } \
  Tensor& name##_out(Tensor& out, const Tensor& x) {                  \
    unary_kernel(UnaryOp::name, x, &out, false);                      \
    return out;                                                       \
  }
BRASA_DEFINE_UNARY(neg)
BRASA_DEFINE_UNARY(abs)
BRASA_DEFINE_UNARY(sign)
BRASA_DEFINE_UNARY(exp)
BRASA_DEFINE_UNARY(exp2)
BRASA_DEFINE_UNARY(expm1)
BRASA_DEFINE_UNARY(log)
BRASA_DEFINE_UNARY(log2)
BRASA_DEFINE_UNARY(log10)
BRASA_DEFINE_UNARY(log1p)
BRASA_DEFINE_UNARY(sqrt)
BRASA_DEFINE_UNARY(rsqrt)
BRASA_DEFINE_UNARY(reciprocal)
BRASA_DEFINE_UNARY(sin)
BRASA_DEFINE_UNARY(cos)
BRASA_DEFINE_UNARY(tan)
BRASA_DEFINE_UNARY(asin)
BRASA_DEFINE_UNARY(acos)
BRASA_DEFINE_UNARY(atan)
BRASA_DEFINE_UNARY(sinh)
BRASA_DEFINE_UNARY(cosh)
BRASA_DEFINE_UNARY(tanh)
BRASA_DEFINE_UNARY(sigmoid)
BRASA_DEFINE_UNARY(relu)
BRASA_DEFINE_UNARY(erf)
BRASA_DEFINE_UNARY(erfinv)
BRASA_DEFINE_UNARY(floor)
BRASA_DEFINE_UNARY(ceil)
BRASA_DEFINE_UNARY(round)
BRASA_DEFINE_UNARY(trunc)
BRASA_DEFINE_UNARY(frac)
BRASA_DEFINE_UNARY(square)
BRASA_DEFINE_UNARY(logical_not)
BRASA_DEFINE_UNARY(bitwise_not)
BRASA_DEFINE_UNARY(isnan)
BRASA_DEFINE_UNARY(isinf)
BRASA_DEFINE_UNARY(isfinite)
#undef BRASA_DEFINE_UNARY

// relu's gradient in one pass: g where y > 0, else 0. Linear in g, so its
// own gradient is the same masking of the incoming one.
Tensor detail::threshold_backward(const Tensor& g, const Tensor& y) {
  autograd::Recorder r(kThresholdBackwardBackward, g);
  Elementwise e("threshold_backward", g.dtype());
  e.input(g).input(y, g.dtype()).build();
  kernel<ThresholdBackwardKernel>(e.device())(e, g.dtype());
  Tensor out = e.result();
  if (r)
    r.save(y).finish(out, [](autograd::FormulaNode& n, const autograd::variable_list& gg) {
      return autograd::variable_list{threshold_backward(gg[0], n.saved(0))};
    });
  return out;
}

Tensor negative(const Tensor& x) { return neg(x); }
Tensor absolute(const Tensor& x) { return abs(x); }

Tensor& detail::unary_inplace(UnaryOp op, Tensor& x) {
  const UnaryRow& u = row(op);
  if (!u.formula) {
    unary_kernel(op, x, &x, true);
    return x;
  }
  return autograd::inplace(
      u.name, x, [&] { unary_kernel(op, x, &x, true); },
      [&](const Tensor& old) { return unary_ad(op, old); });
}

static Tensor nan_to_num_kernel(const Tensor& x, std::optional<double> nan,
                                std::optional<double> posinf, std::optional<double> neginf);
static const autograd::BackwardName kNanToNumBackward("NanToNumBackward0");
Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  if (!x.is_floating_point()) return clone(x);
  autograd::Recorder r(kNanToNumBackward, x);
  Tensor y = nan_to_num_kernel(x, nan, posinf, neginf);
  if (r)
    r.save(x).finish(y, [](autograd::FormulaNode& n, const autograd::variable_list& g) {
      return autograd::variable_list{g[0] * isfinite(n.saved(0))};
    });
  return y;
}

static Tensor nan_to_num_kernel(const Tensor& x, std::optional<double> nan,
                                std::optional<double> posinf, std::optional<double> neginf) {
  Elementwise e("nan_to_num", x.dtype());
  e.input(x).build();
  // Defaults: nan -> 0, +/-inf -> the dtype's largest finite magnitude.
  const double big = x.dtype() == kHalf       ? 65504.0
                     : x.dtype() == kBFloat16 ? 3.3895313892515355e38
                     : x.dtype() == kFloat ? static_cast<double>(std::numeric_limits<float>::max())
                                           : std::numeric_limits<double>::max();
  kernel<NanToNumKernel>(e.device())(e, x.dtype(), nan.value_or(0.0), posinf.value_or(big),
                                     neginf.value_or(-big));
  return e.result();
}

}  // namespace brasa
