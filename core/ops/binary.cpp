#include <brasa/autograd/record.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/complex.h>
#include <brasa/ops/unary.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/elementwise.h>
#include <brasa/ops/reduction.h>

#include <atomic>
#include <optional>
#include <cmath>

namespace brasa {
namespace {

using detail::Elementwise;

using Op = BinaryOp;

const char* op_name(Op op) {
  static const char* names[] = {"add",   "mul",  "div",       "div",     "div",    "pow",
                                "atan2", "fmod", "remainder", "minimum", "maximum"};
  return names[static_cast<int>(op)];
}

// The dtype an arithmetic op computes in, given the promoted input dtype.
ScalarType compute_dtype(Op op, ScalarType common) {
  bool to_float = op == Op::Div || op == Op::Atan2;
  if (to_float && isIntegralType(common, true)) return get_default_dtype();
  return common;
}

Tensor arith(Op op, const Tensor& a, const Tensor& b, const Tensor* out, bool inplace,
             const Scalar& alpha = 1, ScalarType common = ScalarType::Undefined) {
  BRASA_CHECK(a.defined() && b.defined(), op_name(op), ": expected defined tensors");
  BRASA_CHECK(!a.is_complex() && !b.is_complex(), op_name(op), ": not implemented for dtype ",
              a.is_complex() ? a.dtype() : b.dtype());
  if (common == ScalarType::Undefined) common = detail::result_type(a, b);
  ScalarType t = compute_dtype(op, common);
  Elementwise e(op_name(op), t, out, inplace);
  e.input(a, t).input(b, t).build();
  kernel<BinaryKernel>(e.device())(e, op, t, alpha);
  return e.result();
}

Op div_op(const std::optional<std::string>& mode) {
  if (!mode) return Op::Div;
  if (*mode == "trunc") return Op::DivTrunc;
  if (*mode == "floor") return Op::DivFloor;
  BRASA_ERROR("div: expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
              *mode, "'");
}

void check_sub(const Tensor& a, ScalarType bt) {
  BRASA_CHECK(!(a.dtype() == kBool && bt == kBool),
              "sub: subtraction, the `-` operator, with two bool tensors is not supported. "
              "Use the `^` or `logical_xor()` operator instead.");
}

// ---- comparisons, logical and bitwise: output bool (or the integral type) ----
using Cmp = CompareOp;
const char* cmp_name(Cmp c) {
  static const char* names[] = {"eq", "ne",          "lt",         "le",         "gt",
                                "ge", "logical_and", "logical_or", "logical_xor"};
  return names[static_cast<int>(c)];
}

// `out` may be `a` itself (a.lt_(b)): comparisons then write 0/1 into a's dtype,
// which the Elementwise output path handles, so no in-place flag is needed.
Tensor compare(Cmp c, const Tensor& a, const Tensor& b, const Tensor* out,
               ScalarType common = ScalarType::Undefined) {
  if (!out && (c == Cmp::Eq || c == Cmp::Ne) && (a.is_complex() || b.is_complex())) {
    Tensor same = detail::complex_eq(a, b);
    return c == Cmp::Eq ? same : logical_not(same);
  }
  if (common == ScalarType::Undefined) common = detail::result_type(a, b);
  Elementwise e(cmp_name(c), kBool, out);
  e.input(a, common).input(b, common).build();
  kernel<CompareKernel>(e.device())(e, c, common);
  return e.result();
}

using Bit = BitwiseOp;
Tensor bitwise(Bit op, const Tensor& a, const Tensor& b, const Tensor* out, bool inplace,
               ScalarType common = ScalarType::Undefined) {
  static const char* names[] = {"bitwise_and", "bitwise_or", "bitwise_xor"};
  const char* name = names[static_cast<int>(op)];
  if (common == ScalarType::Undefined) common = detail::result_type(a, b);
  BRASA_CHECK(isIntegralType(common, true), name,
              ": only integral and bool tensors are supported, got ", a.dtype(), " and ",
              b.dtype());
  Elementwise e(name, common, out, inplace);
  e.input(a, common).input(b, common).build();
  kernel<BitwiseKernel>(e.device())(e, op, common);
  return e.result();
}

Tensor wrap(const Tensor& a, const Scalar& s, ScalarType& common) {
  Tensor t = detail::wrap_number(a, s);
  common = t.dtype();
  return t;
}

// ---- derivatives ----
using autograd::BackwardName;
using autograd::FormulaNode;
using autograd::variable_list;
// libtorch names the Tensor-Scalar overloads of add/sub/mul/div "...Backward1".
const BackwardName kAddScalarBackward("AddBackward1"), kSubScalarBackward("SubBackward1"),
    kMulScalarBackward("MulBackward1"), kDivScalarBackward("DivBackward1");
const BackwardName kAddBackward("AddBackward0"), kSubBackward("SubBackward0"),
    kMulBackward("MulBackward0"), kDivBackward("DivBackward0"), kPowBackward("PowBackward1"),
    kAtan2Backward("Atan2Backward0"), kFmodBackward("FmodBackward1"),
    kRemainderBackward("RemainderBackward1"), kMinimumBackward("MinimumBackward0"),
    kMaximumBackward("MaximumBackward0");

const BackwardName& backward_name(Op op, const Scalar& alpha, bool scalar_b) {
  switch (op) {
    case Op::Add:
      if (alpha.toDouble() < 0) return scalar_b ? kSubScalarBackward : kSubBackward;
      return scalar_b ? kAddScalarBackward : kAddBackward;
    case Op::Mul:
      return scalar_b ? kMulScalarBackward : kMulBackward;
    case Op::Div:
    case Op::DivTrunc:
    case Op::DivFloor:
      return scalar_b ? kDivScalarBackward : kDivBackward;
    case Op::Pow:
      return kPowBackward;
    case Op::Atan2:
      return kAtan2Backward;
    case Op::Fmod:
      return kFmodBackward;
    case Op::Remainder:
      return kRemainderBackward;
    case Op::Minimum:
      return kMinimumBackward;
    case Op::Maximum:
      return kMaximumBackward;
  }
  return kAddBackward;
}

// Gradients of (a, b) for out = op(a, b); engine un-broadcasts them.
variable_list arith_grads(Op op, FormulaNode& n, const Tensor& g, double alpha) {
  variable_list r(2);
  auto a = [&] { return n.saved(0); };
  auto b = [&] { return n.saved(1); };
  switch (op) {
    case Op::Add:
      if (n.needs(0)) r[0] = g;
      if (n.needs(1)) r[1] = alpha == 1.0 ? g : g * alpha;
      break;
    case Op::Mul:
      if (n.needs(0)) r[0] = g * b();
      if (n.needs(1)) r[1] = g * a();
      break;
    case Op::Div:
      if (n.needs(0)) r[0] = g / b();
      if (n.needs(1)) r[1] = -(g * a()) / (b() * b());
      break;
    case Op::DivTrunc:
    case Op::DivFloor:  // piecewise constant
      if (n.needs(0)) r[0] = zeros_like(g);
      if (n.needs(1)) r[1] = zeros_like(g);
      break;
    case Op::Pow: {
      Tensor x = a(), e = b();
      if (n.needs(0)) r[0] = where(eq(e, 0), zeros_like(g), g * e * pow(x, e - 1));
      if (n.needs(1)) {
        // d/de x^e = x^e log x, taken as 0 where x == 0 and e >= 0.
        Tensor y = pow(x, e);
        r[1] = where(logical_and(eq(x, 0), ge(e, 0)), zeros_like(g), g * y * log(x));
      }
      break;
    }
    case Op::Atan2: {
      Tensor x = a(), y = b(), d = x * x + y * y;
      if (n.needs(0)) r[0] = g * y / d;
      if (n.needs(1)) r[1] = -(g * x) / d;
      break;
    }
    case Op::Fmod:
    case Op::Remainder:
      if (n.needs(0)) r[0] = g;
      if (n.needs(1)) r[1] = -(g * div(a(), b(), op == Op::Fmod ? "trunc" : "floor"));
      break;
    case Op::Minimum:
    case Op::Maximum: {
      Tensor x = a(), y = b();
      Tensor half = g / 2, zero = zeros_like(g);
      Tensor a_wins = op == Op::Minimum ? lt(x, y) : gt(x, y);
      Tensor b_wins = op == Op::Minimum ? gt(x, y) : lt(x, y);
      if (n.needs(0)) r[0] = where(eq(x, y), half, where(a_wins, g, zero));
      if (n.needs(1)) r[1] = where(eq(x, y), half, where(b_wins, g, zero));
      break;
    }
  }
  return r;
}

bool arith_saves_inputs(Op op) { return op != Op::Add && op != Op::DivTrunc && op != Op::DivFloor; }

// Out-of-place arithmetic with its derivative recorded; `scalar_b`: b wraps
// a Scalar operand (it only changes the node's name).
Tensor arith_ad(Op op, const Tensor& a, const Tensor& b, const Scalar& alpha = 1,
                ScalarType common = ScalarType::Undefined, bool scalar_b = false) {
  if (a.is_complex() || b.is_complex()) {  // the ops complex tensors have (complex.h)
    if (op == Op::Add) return detail::complex_add(a, b, alpha.toDouble());
    if (op == Op::Mul) return detail::complex_mul(a, b);
    if (op == Op::Div) return detail::complex_div(a, b);
  }
  autograd::Recorder r(backward_name(op, alpha, scalar_b), a, b);
  Tensor out = arith(op, a, b, nullptr, false, alpha, common);
  if (r) {
    if (arith_saves_inputs(op)) r.save(a, b);
    const double al = alpha.toDouble();
    r.finish(out, [op, al](FormulaNode& n, const variable_list& g) {
      return arith_grads(op, n, g[0], al);
    });
  }
  return out;
}

}  // namespace

// ---- arithmetic ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return arith_ad(Op::Add, a, b, alpha);
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  ScalarType c;
  Tensor bt = wrap(a, b, c);
  return arith_ad(Op::Add, a, bt, alpha, c, /*scalar_b=*/true);
}
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  arith(Op::Add, a, b, &out, false, alpha);
  return out;
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_sub(a, b.dtype());
  return arith_ad(Op::Add, a, b, -alpha);
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  check_sub(a, b.type());
  return add(a, b, -alpha);
}
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_sub(a, b.dtype());
  arith(Op::Add, a, b, &out, false, -alpha);
  return out;
}
Tensor rsub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return sub(b, a, alpha); }
Tensor rsub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  ScalarType c;
  Tensor bt = wrap(a, b, c);
  return arith_ad(Op::Add, bt, a, -alpha, c);
}

#define BRASA_DEFINE_ARITH(name, OP)                                           \
  Tensor name(const Tensor& a, const Tensor& b) { return arith_ad(OP, a, b); } \
  Tensor name(const Tensor& a, const Scalar& b) {                              \
    ScalarType c;                                                              \
    Tensor bt = wrap(a, b, c);                                                 \
    return arith_ad(OP, a, bt, 1, c, OP == Op::Mul);                           \
  }                                                                            \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {          \
    arith(OP, a, b, &out, false);                                              \
    return out;                                                                \
  }
BRASA_DEFINE_ARITH(mul, Op::Mul)
BRASA_DEFINE_ARITH(atan2, Op::Atan2)
BRASA_DEFINE_ARITH(fmod, Op::Fmod)
BRASA_DEFINE_ARITH(remainder, Op::Remainder)
BRASA_DEFINE_ARITH(minimum, Op::Minimum)
BRASA_DEFINE_ARITH(maximum, Op::Maximum)
#undef BRASA_DEFINE_ARITH

Tensor pow(const Tensor& a, const Tensor& b) { return arith_ad(Op::Pow, a, b); }
Tensor pow(const Tensor& a, const Scalar& b) {
  ScalarType c;
  Tensor bt = wrap(a, b, c);
  if (c == a.dtype() && b.toDouble() == 2.0) return mul(a, a);
  if (c == a.dtype() && b.toDouble() == 1.0) return clone(a);
  BRASA_CHECK(!(isIntegralType(c, true) && b.isIntegral(false) && b.toLong() < 0),
              "pow: integers to negative integer powers are not allowed.");
  return arith_ad(Op::Pow, a, bt, 1, c);
}
Tensor pow(const Scalar& base, const Tensor& e) {
  ScalarType c;
  Tensor bt = wrap(e, base, c);
  return arith_ad(Op::Pow, bt, e, 1, c);
}
Tensor& pow_out(Tensor& out, const Tensor& a, const Tensor& b) {
  arith(Op::Pow, a, b, &out, false);
  return out;
}

Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string> mode) {
  return arith_ad(div_op(mode), a, b);
}
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string> mode) {
  ScalarType c;
  Tensor bt = wrap(a, b, c);
  return arith_ad(div_op(mode), a, bt, 1, c, /*scalar_b=*/true);
}
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b, std::optional<std::string> mode) {
  arith(div_op(mode), a, b, &out, false);
  return out;
}
Tensor floor_divide(const Tensor& a, const Tensor& b) { return div(a, b, "floor"); }
Tensor true_divide(const Tensor& a, const Tensor& b) { return div(a, b); }

// ---- comparisons and logical ----
#define BRASA_DEFINE_CMP(name, C)                                                     \
  Tensor name(const Tensor& a, const Tensor& b) { return compare(C, a, b, nullptr); } \
  Tensor name(const Tensor& a, const Scalar& b) {                                     \
    ScalarType c;                                                                     \
    Tensor bt = wrap(a, b, c);                                                        \
    return compare(C, a, bt, nullptr, c);                                             \
  }                                                                                   \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {                 \
    compare(C, a, b, &out);                                                           \
    return out;                                                                       \
  }
BRASA_DEFINE_CMP(eq, Cmp::Eq)
BRASA_DEFINE_CMP(ne, Cmp::Ne)
BRASA_DEFINE_CMP(lt, Cmp::Lt)
BRASA_DEFINE_CMP(le, Cmp::Le)
BRASA_DEFINE_CMP(gt, Cmp::Gt)
BRASA_DEFINE_CMP(ge, Cmp::Ge)
BRASA_DEFINE_CMP(logical_and, Cmp::LogicalAnd)
BRASA_DEFINE_CMP(logical_or, Cmp::LogicalOr)
BRASA_DEFINE_CMP(logical_xor, Cmp::LogicalXor)
#undef BRASA_DEFINE_CMP

#define BRASA_DEFINE_BIT(name, B)                                                            \
  Tensor name(const Tensor& a, const Tensor& b) { return bitwise(B, a, b, nullptr, false); } \
  Tensor name(const Tensor& a, const Scalar& b) {                                            \
    ScalarType c;                                                                            \
    Tensor bt = wrap(a, b, c);                                                               \
    return bitwise(B, a, bt, nullptr, false, c);                                             \
  }                                                                                          \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {                        \
    bitwise(B, a, b, &out, false);                                                           \
    return out;                                                                              \
  }
BRASA_DEFINE_BIT(bitwise_and, Bit::And)
BRASA_DEFINE_BIT(bitwise_or, Bit::Or)
BRASA_DEFINE_BIT(bitwise_xor, Bit::Xor)
#undef BRASA_DEFINE_BIT

// ---- in-place forms ----
namespace detail {
Tensor& add_inplace(Tensor& self, const Tensor& b, const Scalar& alpha) {
  if (self.is_complex() || b.is_complex()) return detail::complex_add_(self, b, alpha.toDouble());
  if (self.dtype() == kBool && b.dtype() == kBool && alpha.toDouble() < 0) check_sub(self, kBool);
  return autograd::inplace(
      "add_", self, [&] { arith(Op::Add, self, b, &self, true, alpha); },
      [&](const Tensor& old) { return arith_ad(Op::Add, old, b, alpha); }, b);
}
Tensor& arith_inplace(BinaryOp op, Tensor& self, const Tensor& b) {
  return autograd::inplace(
      op_name(op), self, [&] { arith(op, self, b, &self, true); },
      [&](const Tensor& old) { return arith_ad(op, old, b); }, b);
}
// Comparisons, logical and bitwise ops are not differentiable.
Tensor& compare_inplace(CompareOp op, Tensor& self, const Tensor& b) {
  compare(op, self, b, &self);
  return self;
}
Tensor& bitwise_inplace(BitwiseOp op, Tensor& self, const Tensor& b) {
  bitwise(op, self, b, &self, true);
  return self;
}
Tensor& div_inplace(Tensor& self, const Tensor& b, std::optional<std::string> mode) {
  Op o = div_op(mode);
  return autograd::inplace(
      "div_", self, [&] { arith(o, self, b, &self, true); },
      [&](const Tensor& old) { return arith_ad(o, old, b); }, b);
}
}  // namespace detail

// ---- ternary ----
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight) {
  return lerp(start, end, detail::scalar_tensor_of(weight, start.dtype()));
}

static Tensor lerp_impl(const Tensor& start, const Tensor& end, const Tensor& w, const Tensor* out,
                        bool inplace) {
  BRASA_CHECK(start.dtype() == end.dtype(), "lerp: expected dtype ", start.dtype(),
              " for `end` but got dtype ", end.dtype());
  BRASA_CHECK(isFloatingType(start.dtype()), "lerp: expected floating tensors, got ",
              start.dtype());
  ScalarType t = start.dtype();
  Elementwise e("lerp", t, out, inplace);
  e.input(start).input(end).input(w, t).build();
  kernel<LerpKernel>(e.device())(e, t);
  return e.result();
}
static const BackwardName kLerpBackward("LerpBackward1");
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  autograd::Recorder r(kLerpBackward, start, end, weight);
  Tensor out = lerp_impl(start, end, weight, nullptr, false);
  if (r)
    r.save(start, end, weight).finish(out, [](FormulaNode& n, const variable_list& g) {
      variable_list d(3);
      Tensor w = n.saved(2);
      if (n.needs(0)) d[0] = g[0] * (1 - w);
      if (n.needs(1)) d[1] = g[0] * w;
      if (n.needs(2)) d[2] = g[0] * (n.saved(1) - n.saved(0));
      return d;
    });
  return out;
}
Tensor& detail::lerp_inplace(Tensor& self, const Tensor& end, const Tensor& w) {
  return autograd::inplace(
      "lerp_", self, [&] { lerp_impl(self, end, w, &self, true); },
      [&](const Tensor& old) { return lerp(old, end, w); }, end, w);
}

static Tensor addc_impl(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value,
                        bool div, const Tensor* out, bool inplace) {
  const char* name = div ? "addcdiv" : "addcmul";
  ScalarType t =
      detail::result_type({detail::operand(self), detail::operand(t1), detail::operand(t2)});
  BRASA_CHECK(!(div && isIntegralType(t, true)), name,
              ": integer division with addcdiv is not supported, got tensors of dtype ", t1.dtype(),
              " and ", t2.dtype());
  Elementwise e(name, t, out, inplace);
  e.input(self, t).input(t1, t).input(t2, t).build();
  kernel<AddcKernel>(e.device())(e, t, value, div);
  return e.result();
}
static const BackwardName kAddcmulBackward("AddcmulBackward0"),
    kAddcdivBackward("AddcdivBackward0");
static Tensor addc_ad(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value,
                      bool is_div) {
  autograd::Recorder r(is_div ? kAddcdivBackward : kAddcmulBackward, self, t1, t2);
  Tensor out = addc_impl(self, t1, t2, value, is_div, nullptr, false);
  if (r) {
    const double v = value.toDouble();
    r.save(t1, t2).finish(out, [v, is_div](FormulaNode& n, const variable_list& g) {
      variable_list d(3);
      Tensor a = n.saved(0), b = n.saved(1);
      if (n.needs(0)) d[0] = g[0];
      if (is_div) {
        if (n.needs(1)) d[1] = g[0] * v / b;
        if (n.needs(2)) d[2] = -(g[0] * v * a) / (b * b);
      } else {
        if (n.needs(1)) d[1] = g[0] * b * v;
        if (n.needs(2)) d[2] = g[0] * a * v;
      }
      return d;
    });
  }
  return out;
}
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return addc_ad(self, t1, t2, value, false);
}
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return addc_ad(self, t1, t2, value, true);
}
Tensor& detail::addcmul_inplace(Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& v,
                                bool div) {
  return autograd::inplace(
      div ? "addcdiv_" : "addcmul_", self, [&] { addc_impl(self, t1, t2, v, div, &self, true); },
      [&](const Tensor& old) { return addc_ad(old, t1, t2, v, div); }, t1, t2);
}

static Tensor where_impl(const Tensor& cond, const Tensor& a, const Tensor& b, ScalarType t,
                         const Tensor* out, bool inplace, const char* name) {
  BRASA_CHECK(cond.dtype() == kBool || cond.dtype() == kByte, name,
              ": expected condition/mask to be a bool tensor, got ", cond.dtype());
  Elementwise e(name, t, out, inplace);
  e.input(a, t).input(cond, kBool).input(b, t).build();
  kernel<WhereKernel>(e.device())(e, t);
  return e.result();
}

static const BackwardName kWhereBackward("WhereBackward0");
static Tensor where_ad(const Tensor& cond, const Tensor& self, const Tensor& other, ScalarType t) {
  autograd::Recorder r(kWhereBackward, cond, self, other);
  Tensor out = where_impl(cond, self, other, t, nullptr, false, "where");
  if (r)
    r.save(cond).finish(out, [](FormulaNode& n, const variable_list& g) {
      variable_list d(3);
      Tensor c = n.saved(0), zero = zeros_like(g[0]);
      if (n.needs(1)) d[1] = where(c, g[0], zero);
      if (n.needs(2)) d[2] = where(c, zero, g[0]);
      return d;
    });
  return out;
}
Tensor where(const Tensor& cond, const Tensor& self, const Tensor& other) {
  return where_ad(cond, self, other, detail::result_type(self, other));
}
Tensor where(const Tensor& cond, const Scalar& self, const Tensor& other) {
  ScalarType t = detail::result_type({detail::operand(self), detail::operand(other)});
  return where_ad(cond, detail::scalar_tensor_of(self, t), other, t);
}
Tensor where(const Tensor& cond, const Tensor& self, const Scalar& other) {
  ScalarType t = detail::result_type(self, other);
  return where_ad(cond, self, detail::scalar_tensor_of(other, t), t);
}
Tensor where(const Tensor& cond, const Scalar& self, const Scalar& other) {
  ScalarType t = detail::result_type({detail::operand(self), detail::operand(other)});
  return where_impl(cond, detail::scalar_tensor_of(self, t), detail::scalar_tensor_of(other, t), t,
                    nullptr, false, "where");
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  return masked_fill(self, mask, detail::scalar_tensor_of(value, self.dtype()));
}
static void check_masked_fill(const Tensor& mask, const Tensor& value) {
  BRASA_CHECK(mask.dtype() == kBool, "masked_fill_: expected mask to have dtype Bool, got ",
              mask.dtype());
  BRASA_CHECK(value.dim() == 0,
              "masked_fill_: only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s)");
}
static const BackwardName kMaskedFillBackward("MaskedFillBackward0");
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  check_masked_fill(mask, value);
  autograd::Recorder r(kMaskedFillBackward, self, value);
  Tensor out = clone(self);
  where_impl(mask, value, out, out.dtype(), &out, true, "masked_fill_");
  if (r)
    r.save(mask).finish(out, [](FormulaNode& n, const variable_list& g) {
      variable_list d(2);
      Tensor m = n.saved(0), zero = zeros_like(g[0]);
      if (n.needs(0)) d[0] = where(m, zero, g[0]);
      if (n.needs(1)) d[1] = where(m, g[0], zero).sum();
      return d;
    });
  return out;
}
Tensor& detail::masked_fill_inplace(Tensor& self, const Tensor& mask, const Tensor& value) {
  check_masked_fill(mask, value);
  return autograd::inplace(
      "masked_fill_", self,
      [&] { where_impl(mask, value, self, self.dtype(), &self, true, "masked_fill_"); },
      [&](const Tensor& old) { return masked_fill(old, mask, value); }, value);
}

static Tensor clamp_impl(const Tensor& self, std::optional<Scalar> lo, std::optional<Scalar> hi,
                         const Tensor* out, bool inplace) {
  BRASA_CHECK(lo.has_value() || hi.has_value(),
              "clamp: at least one of 'min' or 'max' must not be None");
  ScalarType t = self.dtype();
  if (!inplace) {
    if (lo) t = detail::result_type({detail::operand(self), detail::operand(*lo)});
    if (hi) t = promoteTypes(t, detail::result_type({detail::operand(self), detail::operand(*hi)}));
  }
  BRASA_CHECK(t != kBool, "clamp: not implemented for 'Bool'");
  Elementwise e("clamp", t, out, inplace);
  e.input(self, t).build();
  kernel<ClampKernel>(e.device())(e, t, lo, hi);
  return e.result();
}
static const BackwardName kClampBackward("ClampBackward1");
static const BackwardName kHardtanhBackward("HardtanhBackward0");
static const BackwardName kClampBackwardBackward("ClampBackwardBackward0");
// clamp's gradient: g where x is inside the bounds (strictly for hardtanh),
// else 0; one pass where the device has the kernel. Linear in g, so its own
// gradient is the same masking of the incoming one.
Tensor detail::clamp_backward(const Tensor& g, const Tensor& x, std::optional<Scalar> lo,
                              std::optional<Scalar> hi, bool strict) {
  if (!g.is_floating_point() || !has_kernel<ClampBackwardKernel>(g.device())) {
    Tensor keep = ones_like(x, TensorOptions().dtype(kBool));
    if (lo) keep = logical_and(keep, strict ? gt(x, *lo) : ge(x, *lo));
    if (hi) keep = logical_and(keep, strict ? lt(x, *hi) : le(x, *hi));
    return where(keep, g, zeros_like(g));
  }
  autograd::Recorder r(kClampBackwardBackward, g);
  Elementwise e("clamp_backward", g.dtype());
  e.input(g).input(x, g.dtype()).build();
  kernel<ClampBackwardKernel>(e.device())(e, g.dtype(), lo, hi, strict);
  Tensor out = e.result();
  if (r)
    r.save(x).finish(out, [lo, hi, strict](FormulaNode& n, const variable_list& gg) {
      return variable_list{clamp_backward(gg[0], n.saved(0), lo, hi, strict)};
    });
  return out;
}
Tensor clamp(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  autograd::Recorder r(kClampBackward, self);
  Tensor out = clamp_impl(self, min, max, nullptr, false);
  if (r)
    r.save(self).finish(out, [min, max](FormulaNode& n, const variable_list& g) {
      return variable_list{detail::clamp_backward(g[0], n.saved(0), min, max, false)};
    });
  return out;
}
Tensor detail::hardtanh(const Tensor& self, double lo, double hi) {
  autograd::Recorder r(kHardtanhBackward, self);
  Tensor out = clamp_impl(self, lo, hi, nullptr, false);
  if (r)
    r.save(self).finish(out, [lo, hi](FormulaNode& n, const variable_list& g) {
      return variable_list{detail::clamp_backward(g[0], n.saved(0), lo, hi, true)};
    });
  return out;
}
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min,
             const std::optional<Tensor>& max) {
  BRASA_CHECK(min || max, "clamp: at least one of 'min' or 'max' must not be None");
  Tensor r = self;
  if (min) r = where(lt(r, *min), *min, r);
  if (max) r = where(gt(r, *max), *max, r);
  return r.is_same(self) ? clone(self) : r;
}
Tensor clamp_min(const Tensor& self, const Scalar& min) { return clamp(self, min, std::nullopt); }
Tensor clamp_max(const Tensor& self, const Scalar& max) { return clamp(self, std::nullopt, max); }
Tensor clip(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  return clamp(self, min, max);
}
Tensor& detail::clamp_inplace(Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  return autograd::inplace(
      "clamp_", self, [&] { clamp_impl(self, min, max, &self, true); },
      [&](const Tensor& old) { return clamp(old, min, max); });
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  BRASA_CHECK(a.dtype() == b.dtype(), "isclose: self (", a.dtype(), ") and other (", b.dtype(),
              ") must have the same dtype");
  ScalarType t = a.dtype();
  if (isComplexType(t)) {
    // As PyTorch: equal, or both NaN (a NaN in either part) when equal_nan,
    // or a finite |a - b| (the modulus) within atol + rtol |b|.
    NoGradGuard no_grad;
    Tensor close = eq(a, b);
    if (equal_nan) {
      auto has_nan = [](const Tensor& z) { return view_as_real(z).isnan().any(-1); };
      close = logical_or(close, logical_and(has_nan(a), has_nan(b)));
    }
    Tensor error = abs(a - b);
    return logical_or(close, logical_and(error.isfinite(), le(error, abs(b) * rtol + atol)));
  }
  Elementwise e("isclose", kBool);
  e.input(a).input(b).build();
  kernel<IsCloseKernel>(e.device())(e, t, rtol, atol, equal_nan);
  return e.result();
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return isclose(a, b, rtol, atol, equal_nan).all().item<bool>();
}

bool equal(const Tensor& a, const Tensor& b) {
  if (!(a.sizes() == b.sizes())) return false;
  return eq(a, b).all().item<bool>();
}

}  // namespace brasa
