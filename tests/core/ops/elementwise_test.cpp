#include <cmath>
#include <limits>

#include "../test_util.h"

using namespace brasa;

TEST(Elementwise, ArithmeticWithBroadcasting) {
  auto a = tensor({{1.0, 2.0, 3.0}}), b = tensor({{10.0}, {20.0}});
  auto s = a + b;
  EXPECT_SHAPE(s, {2, 3});
  EXPECT_VALUES(s, {11, 12, 13, 21, 22, 23});
  EXPECT_VALUES(b - a, {9, 8, 7, 19, 18, 17});
  EXPECT_VALUES(a * 2, {2, 4, 6});
  EXPECT_VALUES(2 * a, {2, 4, 6});
  EXPECT_VALUES(1 - a, {0, -1, -2});
  EXPECT_VALUES(6 / a, {6, 3, 2});
  EXPECT_VALUES(add(a, a, 0.5), {1.5, 3, 4.5});
  EXPECT_VALUES(a.sub(1, 2), {-1, 0, 1});
  EXPECT_VALUES(-a, {-1, -2, -3});
}

TEST(Elementwise, NonContiguousAndEmptyAndZeroDim) {
  auto m = arange(6, kFloat).view({2, 3}).t();  // [3, 2], strided
  auto r = m + tensor({100.0, 200.0});
  EXPECT_VALUES(r, {100, 203, 101, 204, 102, 205});
  auto e = zeros({0, 3}) + ones({3});
  EXPECT_SHAPE(e, {0, 3});
  auto z = scalar_tensor(2.0) * scalar_tensor(3.0);
  EXPECT_EQ(z.dim(), 0);
  EXPECT_EQ(z.item<float>(), 6.0f);
  auto big = arange(100000, kDouble);
  auto sq = big * big;  // crosses the parallel grain
  EXPECT_EQ(sq.index({99999}).item<double>(), 99999.0 * 99999.0);
}

// Writing into an expanded view (several elements on one memory location) is
// refused, as in libtorch, in place and as out=.
TEST(Elementwise, OutputsThatOverlapThemselvesAreRefused) {
  Tensor x = zeros({3}).expand({2, 3});
  const char* msg =
      "unsupported operation: more than one element of the written-to tensor refers to a single "
      "memory location. Please clone() the tensor before performing the operation.";
  EXPECT_ERROR(msg, x.add_(1));
  EXPECT_ERROR(msg, x.mul_(ones({2, 3})));
  EXPECT_ERROR(msg, x.exp_());
  Tensor out = zeros({1, 3}).expand({2, 3});
  EXPECT_ERROR(msg, add_out(out, ones({2, 3}), ones({2, 3})));
  Tensor y = x.clone();
  y.add_(1);  // the clone is fine
  EXPECT_VALUES(y, {1, 1, 1, 1, 1, 1});
  EXPECT_VALUES(x, {0, 0, 0, 0, 0, 0});    // nothing was written
  Tensor one = zeros({1}).expand({1, 1});  // size-1 dims may have any stride
  one.add_(2);
  EXPECT_VALUES(one, {2});
}

// The lowest integer over -1 traps in hardware (libtorch 1.13 dies of
// SIGFPE): the quotient wraps to the lowest value, as NumPy's does, the
// remainders are 0, on every path (tensor and scalar divisor, every mode).
TEST(Elementwise, LowestIntegerOverMinusOne) {
  auto check = [](ScalarType t, int64_t lowest) {
    SCOPED_TRACE(toString(t));
    Tensor a = tensor({lowest, int64_t{7}, int64_t{-7}, int64_t{0}}, TensorOptions().dtype(t));
    Tensor m1 = full({4}, -1, TensorOptions().dtype(t));
    const std::vector<double> quotient = {double(lowest), -7, 7, 0};
    EXPECT_EQ(floor_divide(a, m1).to(kLong)[0].item<int64_t>(), lowest);
    EXPECT_EQ(::brasa::testing::values(floor_divide(a, m1).to(kDouble)), quotient);
    EXPECT_EQ(::brasa::testing::values(div(a, m1, "trunc").to(kDouble)), quotient);
    EXPECT_EQ(::brasa::testing::values(div(a, m1, "floor").to(kDouble)), quotient);
    EXPECT_EQ(::brasa::testing::values(a.div(-1, "trunc").to(kDouble)), quotient);
    EXPECT_VALUES(remainder(a, m1), {0, 0, 0, 0});
    EXPECT_VALUES(fmod(a, m1), {0, 0, 0, 0});
    EXPECT_VALUES(a.remainder(-1), {0, 0, 0, 0});
    EXPECT_VALUES(a.fmod(-1), {0, 0, 0, 0});
  };
  check(kInt, std::numeric_limits<int32_t>::min());
  check(kLong, std::numeric_limits<int64_t>::min());
  check(kShort, std::numeric_limits<int16_t>::min());
  check(kChar, std::numeric_limits<int8_t>::min());
}

TEST(Elementwise, DivisionModes) {
  auto a = tensor({7, -7, 7, -7}), b = tensor({2, 2, -2, -2});
  EXPECT_EQ(div(a, b).dtype(), kFloat);  // true division of ints
  EXPECT_VALUES(div(a, b), {3.5, -3.5, -3.5, 3.5});
  EXPECT_VALUES(div(a, b, "trunc"), {3, -3, -3, 3});
  EXPECT_VALUES(div(a, b, "floor"), {3, -4, -4, 3});
  EXPECT_EQ(div(a, b, "floor").dtype(), kLong);
  auto fa = a.to(kDouble), fb = b.to(kDouble);
  EXPECT_VALUES(div(fa, fb, "floor"), {3, -4, -4, 3});
  EXPECT_VALUES(fmod(a, b), {1, -1, 1, -1});
  EXPECT_VALUES(remainder(a, b), {1, 1, -1, -1});
  EXPECT_VALUES(remainder(fa, fb), {1, 1, -1, -1});
  EXPECT_VALUES(a % 3, {1, 2, 1, 2});
  EXPECT_THROW(div(a, tensor({0, 1, 1, 1}), "floor"), Error);
  EXPECT_TRUE(std::isinf(div(tensor({1.0}), tensor({0.0})).item<double>()));
}

TEST(Elementwise, PowAndFriends) {
  auto a = tensor({1.0, 2.0, 4.0});
  EXPECT_VALUES(a.pow(2), {1, 4, 16});
  EXPECT_CLOSE(a.pow(0.5), std::vector<double>({1, std::sqrt(2.0), 2}), 1e-6);
  EXPECT_VALUES(pow(2, tensor({1, 2, 3})), {2, 4, 8});
  EXPECT_VALUES(tensor({2, 3}).pow(tensor({3, 2})), {8, 9});
  EXPECT_VALUES(tensor({2, 1, -1}).pow(tensor({-1, -2, -3})), {0, 1, -1});
  EXPECT_THROW(tensor({2, 3}).pow(-1), Error);
  EXPECT_CLOSE(atan2(tensor({1.0, -1.0}), tensor({1.0, 1.0})),
               std::vector<double>({M_PI / 4, -M_PI / 4}), 1e-6);
  EXPECT_VALUES(minimum(tensor({1, 5}), tensor({3, 2})), {1, 2});
  EXPECT_VALUES(maximum(tensor({1, 5}), tensor({3, 2})), {3, 5});
  EXPECT_TRUE(std::isnan(maximum(tensor({NAN}), tensor({1.0})).item<double>()));
}

TEST(Elementwise, UnaryMath) {
  auto x = tensor({0.5, -1.5, 2.0});
  EXPECT_VALUES(x.abs(), {0.5, 1.5, 2});
  EXPECT_VALUES(x.sign(), {1, -1, 1});
  EXPECT_VALUES(x.neg(), {-0.5, 1.5, -2});
  EXPECT_VALUES(x.floor(), {0, -2, 2});
  EXPECT_VALUES(x.ceil(), {1, -1, 2});
  EXPECT_VALUES(tensor({0.5, 1.5, 2.5, -0.5}).round(), {0, 2, 2, -0});  // half to even
  EXPECT_VALUES(x.trunc(), {0, -1, 2});
  EXPECT_VALUES(x.frac(), {0.5, -0.5, 0});
  EXPECT_VALUES(x.relu(), {0.5, 0, 2});
  EXPECT_VALUES(x.square(), {0.25, 2.25, 4});
  EXPECT_VALUES(tensor({4.0}).sqrt(), {2});
  EXPECT_VALUES(tensor({4.0}).rsqrt(), {0.5});
  EXPECT_VALUES(tensor({4.0}).reciprocal(), {0.25});
  auto y = tensor({0.1, 0.7}, kDouble);
  auto chk = [&](Tensor r, double (*f)(double)) {
    EXPECT_NEAR(r.index({0}).item<double>(), f(0.1), 1e-12);
    EXPECT_NEAR(r.index({1}).item<double>(), f(0.7), 1e-12);
  };
  chk(y.exp(), std::exp);
  chk(y.exp2(), std::exp2);
  chk(y.expm1(), std::expm1);
  chk(y.log(), std::log);
  chk(y.log2(), std::log2);
  chk(y.log10(), std::log10);
  chk(y.log1p(), std::log1p);
  chk(y.sin(), std::sin);
  chk(y.cos(), std::cos);
  chk(y.tan(), std::tan);
  chk(y.asin(), std::asin);
  chk(y.acos(), std::acos);
  chk(y.atan(), std::atan);
  chk(y.sinh(), std::sinh);
  chk(y.cosh(), std::cosh);
  chk(y.tanh(), std::tanh);
  chk(y.erf(), std::erf);
  EXPECT_NEAR(y.sigmoid().index({1}).item<double>(), 1 / (1 + std::exp(-0.7)), 1e-12);
  EXPECT_NEAR(y.erf().erfinv().index({1}).item<double>(), 0.7, 1e-10);
  EXPECT_NEAR(tensor({0.5}).erfinv().item<double>(), 0.4769362762044699, 1e-6);
  // Integer inputs of float-valued math give the default float dtype.
  EXPECT_EQ(tensor({1, 2}).exp().dtype(), kFloat);
  EXPECT_EQ(tensor({1, -2}).abs().dtype(), kLong);
  EXPECT_VALUES(tensor({1, -2}).abs(), {1, 2});
  EXPECT_THROW(tensor({1, 2}).frac(), Error);
}

// float tanh and sigmoid take the vectorized forms (vec_math.h); the values
// stay within a few float ulps of the double results, whatever the layout,
// and half precision is computed in float.
TEST(Elementwise, FloatTanhAndSigmoidAreAccurate) {
  auto x = cat({linspace(-12, 12, 20001), tensor({0.0f, -0.0f, 0.625f, -0.625f, 1e-20f})});
  auto ref = x.to(kDouble);
  auto rel = [](const Tensor& got, const Tensor& want) {
    return ((got.to(kDouble) - want).abs() / want.abs().clamp_min(1e-300)).max().item<double>();
  };
  EXPECT_LT(rel(x.tanh(), ref.tanh()), 3e-7);
  EXPECT_LT(rel(x.sigmoid(), ref.sigmoid()), 4e-7);
  EXPECT_VALUES(tensor({INFINITY, -INFINITY, 30.0f}).tanh(), {1, -1, 1});
  EXPECT_TRUE(std::isnan(tensor({NAN}).tanh().item<float>()));
  EXPECT_TRUE(std::isnan(tensor({NAN}).sigmoid().item<float>()));
  EXPECT_VALUES(tensor({-INFINITY, INFINITY, 0.0f}).sigmoid(), {0, 1, 0.5});
  manual_seed(6);
  auto m = randn({37, 53}) * 3.0;
  EXPECT_TRUE(m.t().tanh().equal(m.tanh().t()));
  EXPECT_TRUE(
      m.flatten().slice(0, 2, 900, 7).sigmoid().equal(m.flatten().sigmoid().slice(0, 2, 900, 7)));
  EXPECT_LT(rel(m.to(kHalf).tanh().to(kFloat), m.to(kHalf).to(kDouble).tanh()), 1e-3);
  EXPECT_LT(rel(m.to(kBFloat16).sigmoid().to(kFloat), m.to(kBFloat16).to(kDouble).sigmoid()), 8e-3);
}

TEST(Elementwise, FastExpIsAccurate) {
  auto x = linspace(-87, 88, 20001);
  auto e = x.exp();
  auto ref = x.to(kDouble).exp();
  auto rel = ((e.to(kDouble) - ref).abs() / ref).max().item<double>();
  EXPECT_LT(rel, 4e-7);
  EXPECT_TRUE(std::isinf(tensor({100.0f}).exp().item<float>()));
  EXPECT_EQ(tensor({-200.0f}).exp().item<float>(), 0.0f);
  EXPECT_TRUE(std::isnan(tensor({NAN}).exp().item<float>()));
  // Subnormal results, within two units of the smallest subnormal.
  auto tiny = linspace(-103.9, -87.4, 1001);
  EXPECT_LE((tiny.exp().to(kDouble) - tiny.to(kDouble).exp()).abs().max().item<double>(),
            2 * std::ldexp(1.0, -149));
  // The same values whatever the layout: a transposed view, a strided slice,
  // lengths off the groups of 8, in place.
  manual_seed(4);
  auto m = randn({37, 53}) * 20.0;
  EXPECT_TRUE(m.t().exp().equal(m.exp().t()));
  auto flat = m.flatten();
  EXPECT_TRUE(flat.slice(0, 1, 1000, 3).exp().equal(flat.exp().slice(0, 1, 1000, 3)));
  auto copy = m.clone();
  copy.exp_();
  EXPECT_TRUE(copy.equal(m.exp()));
}

TEST(Elementwise, InPlaceAndOutForms) {
  auto a = tensor({1.0, 2.0});
  a.add_(tensor({1.0, 1.0})).mul_(3);
  EXPECT_VALUES(a, {6, 9});
  a.div_(3).sub_(1);
  EXPECT_VALUES(a, {1, 2});
  a.exp_().log_();
  EXPECT_CLOSE(a, std::vector<double>({1, 2}), 1e-6);
  a.clamp_(1.5, std::nullopt);
  EXPECT_VALUES(a, {1.5, 2});
  auto i = tensor({1, 2});
  EXPECT_THROW(i.add_(0.5), Error);  // float can't be cast into int64 in place
  EXPECT_THROW(i.exp_(), Error);
  EXPECT_THROW(ones({2}).add_(ones({2, 2})), Error);  // in-place can't broadcast self
  auto out = empty({0});
  add_out(out, tensor({1.0}), tensor({2.0, 3.0}));
  EXPECT_VALUES(out, {3, 4});
  auto out2 = empty({2}, kDouble);
  mul_out(out2, tensor({1.5, 2.0}), tensor({2.0, 2.0}));
  EXPECT_VALUES(out2, {3, 4});
  auto o3 = empty({2});
  exp_out(o3, tensor({0.0, 0.0}));
  EXPECT_VALUES(o3, {1, 1});
  // Overlapping in-place: x += x.flip() must read the original values.
  auto x = arange(4, kFloat);
  x.add_(x.flip({0}));
  EXPECT_VALUES(x, {3, 3, 3, 3});
  auto v = arange(3, kFloat);
  v += 1;
  v *= v;
  EXPECT_VALUES(v, {1, 4, 9});
}

TEST(Elementwise, ComparisonsLogicalBitwise) {
  auto a = tensor({1, 2, 3}), b = tensor({3, 2, 1});
  EXPECT_VALUES(a == b, {0, 1, 0});
  EXPECT_EQ((a == b).dtype(), kBool);
  EXPECT_VALUES(a != b, {1, 0, 1});
  EXPECT_VALUES(a < b, {1, 0, 0});
  EXPECT_VALUES(a <= b, {1, 1, 0});
  EXPECT_VALUES(a > 1, {0, 1, 1});
  EXPECT_VALUES(a >= 2.5, {0, 0, 1});
  EXPECT_VALUES(logical_and(a > 1, b > 1), {0, 1, 0});
  EXPECT_VALUES(logical_or(a > 2, b > 2), {1, 0, 1});
  EXPECT_VALUES(logical_xor(a > 1, b > 1), {1, 0, 1});
  EXPECT_VALUES((a > 1).logical_not(), {1, 0, 0});
  EXPECT_VALUES(a & b, {1, 2, 1});
  EXPECT_VALUES(a | b, {3, 2, 3});
  EXPECT_VALUES(a ^ b, {2, 0, 2});
  EXPECT_VALUES(~tensor({0, 5}), {-1, -6});
  EXPECT_VALUES(~(a > 1), {1, 0, 0});
  EXPECT_THROW(tensor({1.0}) & tensor({1.0}), Error);
  auto f = tensor({1.0, NAN, INFINITY, -INFINITY});
  EXPECT_VALUES(f.isnan(), {0, 1, 0, 0});
  EXPECT_VALUES(f.isinf(), {0, 0, 1, 1});
  EXPECT_VALUES(f.isfinite(), {1, 0, 0, 0});
  EXPECT_VALUES(tensor({1, 2}).isfinite(), {1, 1});
  EXPECT_VALUES(f.nan_to_num(0.0, 9.0, -9.0), {1, 0, 9, -9});
  EXPECT_EQ(f.nan_to_num().index({2}).item<float>(), std::numeric_limits<float>::max());
}

TEST(Elementwise, InPlaceComparisonsLogicalBitwise) {
  auto a = tensor({1.0, 2.0, 3.0});
  a.lt_(2.5);
  EXPECT_EQ(a.dtype(), kFloat);  // keeps its dtype, holds 0/1
  EXPECT_VALUES(a, {1, 1, 0});
  auto b = tensor({1, 5, 3});
  b.ge_(tensor({1, 6, 2}));
  EXPECT_VALUES(b, {1, 0, 1});
  auto c = tensor({true, false, true});
  c.logical_and_(tensor({true, true, false}));
  EXPECT_VALUES(c, {1, 0, 0});
  c.logical_not_();
  EXPECT_VALUES(c, {0, 1, 1});
  auto d = tensor({12, 10});
  d &= tensor({10, 6});
  EXPECT_VALUES(d, {8, 2});
  d |= tensor({1, 1});
  d ^= tensor({3, 3});
  EXPECT_VALUES(d, {10, 0});
  d.bitwise_not_();
  EXPECT_VALUES(d, {-11, -1});
  auto e = tensor({7, -7});
  e.remainder_(tensor({3, 3}));
  EXPECT_VALUES(e, {1, 2});
  auto f = tensor({NAN, 1.0});
  f.nan_to_num_(5.0);
  EXPECT_VALUES(f, {5, 1});
  EXPECT_THROW(tensor({1.0, 2.0}).eq_(ones({2, 2})), Error);
  EXPECT_THROW(tensor({1.0}).bitwise_and_(tensor({1.0})), Error);
}

// where, masked_fill, conversions from bool and the comparisons of bool
// operands over long random masks (the vector loops and their tails, contiguous, broadcast and
// strided) against an element-by-element reference.
TEST(Elementwise, WhereAndBoolComparisonsOverLongRandomMasks) {
  manual_seed(5);
  const int64_t n = 1000 + 37;
  Tensor mask = rand({n}) > 0.5, other = rand({n}) > 0.3;
  const Tensor mb = mask.to(kLong), ob = other.to(kLong);
  for (ScalarType dt : {kFloat, kDouble, kInt, kHalf, kBool, kByte}) {
    SCOPED_TRACE(toString(dt));
    Tensor a = randint(-50, 50, {n}).to(dt), b = randint(-50, 50, {n}).to(dt);
    const Tensor ad = a.to(kDouble), bd = b.to(kDouble);
    const Tensor w = where(mask, a, b).to(kDouble), f = a.masked_fill(mask, 7).to(kDouble);
    // The mask converted to dt (the copy kernel), from contiguous and strided bools.
    const Tensor converted = mask.to(dt).to(kDouble),
                 converted_strided =
                     mask.view({n, 1}).expand({n, 2}).contiguous().select(1, 1).to(dt).to(kDouble);
    const Tensor strided =
        where(mask.view({n, 1}).expand({n, 2}).contiguous().select(1, 1), a, b).to(kDouble);
    for (int64_t i = 0; i < n; ++i) {
      const bool m = mb[i].item<int64_t>() != 0;
      const double want = m ? ad[i].item<double>() : bd[i].item<double>();
      ASSERT_EQ(w[i].item<double>(), want) << i;
      ASSERT_EQ(strided[i].item<double>(), want) << i;
      ASSERT_EQ(f[i].item<double>(), m ? (dt == kBool ? 1.0 : 7.0) : ad[i].item<double>()) << i;
      ASSERT_EQ(converted[i].item<double>(), m ? 1.0 : 0.0) << i;
      ASSERT_EQ(converted_strided[i].item<double>(), m ? 1.0 : 0.0) << i;
    }
  }
  const Tensor both = logical_and(mask, other).to(kLong),
               either = logical_or(mask, other).to(kLong), one = logical_xor(mask, other).to(kLong),
               eq = mask.eq(other).to(kLong), lt = mask.lt(other).to(kLong),
               ge = mask.ge(true).to(kLong), negated = mask.logical_not().to(kLong),
               flipped = (~mask).to(kLong), count = mask.sum();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x = mb[i].item<int64_t>(), y = ob[i].item<int64_t>();
    ASSERT_EQ(both[i].item<int64_t>(), x && y) << i;
    ASSERT_EQ(either[i].item<int64_t>(), x || y) << i;
    ASSERT_EQ(one[i].item<int64_t>(), x != y) << i;
    ASSERT_EQ(eq[i].item<int64_t>(), x == y) << i;
    ASSERT_EQ(lt[i].item<int64_t>(), x < y) << i;
    ASSERT_EQ(ge[i].item<int64_t>(), x) << i;
    ASSERT_EQ(negated[i].item<int64_t>(), !x) << i;
    ASSERT_EQ(flipped[i].item<int64_t>(), !x) << i;
  }
  EXPECT_EQ(count.item<int64_t>(), mb.sum().item<int64_t>());
}

TEST(Elementwise, ClampLerpAddcWhereMaskedFill) {
  auto x = tensor({-2.0, 0.5, 3.0});
  EXPECT_VALUES(x.clamp(-1, 1), {-1, 0.5, 1});
  EXPECT_VALUES(x.clamp_min(0), {0, 0.5, 3});
  EXPECT_VALUES(x.clamp_max(0), {-2, 0, 0});
  EXPECT_VALUES(tensor({1, 5, 9}).clamp(2, 6), {2, 5, 6});
  EXPECT_TRUE(std::isnan(tensor({NAN}).clamp(0, 1).item<float>()));
  EXPECT_VALUES(clamp(x, std::optional<Tensor>(tensor({0.0, 1.0, 0.0})), std::optional<Tensor>()),
                {0, 1, 3});
  EXPECT_VALUES(lerp(tensor({0.0, 10.0}), tensor({10.0, 20.0}), 0.25), {2.5, 12.5});
  EXPECT_VALUES(lerp(tensor({0.0, 0.0}), tensor({10.0, 10.0}), tensor({0.0, 1.0})), {0, 10});
  EXPECT_VALUES(addcmul(tensor({1.0}), tensor({2.0}), tensor({3.0}), 0.5), {4});
  EXPECT_VALUES(addcdiv(tensor({1.0}), tensor({2.0}), tensor({4.0}), 2), {2});
  auto c = tensor({true, false, true});
  EXPECT_VALUES(where(c, tensor({1, 2, 3}), tensor({10, 20, 30})), {1, 20, 3});
  EXPECT_VALUES(where(c, 1.5, tensor({0.0, 0.0, 0.0})), {1.5, 0, 1.5});
  EXPECT_EQ(where(c, tensor({1, 2, 3}), 0.5).dtype(), kFloat);
  EXPECT_VALUES(tensor({1, 2, 3}).masked_fill(c, -1), {-1, 2, -1});
  auto m = zeros({2, 2});
  m.masked_fill_(tensor({true, false}), 5);  // mask broadcasts over rows
  EXPECT_VALUES(m, {5, 0, 5, 0});
  EXPECT_TRUE(allclose(tensor({1.0, 2.0}), tensor({1.0, 2.0000001})));
  EXPECT_FALSE(allclose(tensor({1.0, 2.0}), tensor({1.0, 2.1})));
  EXPECT_VALUES(isclose(tensor({NAN, 1.0}), tensor({NAN, 1.0}), 1e-5, 1e-8, true), {1, 1});
  EXPECT_TRUE(equal(tensor({1, 2}), tensor({1, 2})));
  EXPECT_FALSE(equal(tensor({1, 2}), tensor({1, 2, 3})));
}

TEST(Elementwise, EveryDtypePath) {
  for (auto t : {kByte, kChar, kShort, kInt, kLong, kHalf, kFloat, kDouble, kBFloat16}) {
    auto a = tensor({1, 2, 3}, t), b = tensor({4, 5, 6}, t);
    EXPECT_EQ((a + b).dtype(), t) << t;
    EXPECT_VALUES(a + b, {5, 7, 9});
    EXPECT_VALUES(b - a, {3, 3, 3});
    EXPECT_VALUES(a * b, {4, 10, 18});
    EXPECT_VALUES(maximum(a, b), {4, 5, 6});
    EXPECT_VALUES(a < b, {1, 1, 1});
    EXPECT_VALUES(a.sum(), {6});
    EXPECT_VALUES(a.to(kDouble), {1, 2, 3});
  }
  auto bo = tensor({true, false});
  EXPECT_VALUES(bo + bo, {1, 0});
  EXPECT_VALUES(bo * tensor({true, true}), {1, 0});
  EXPECT_THROW(bo - bo, Error);
}

// Outputs of 8 MiB and more are written with streaming stores in 256-byte
// runs: a head up to 32-byte alignment, whole runs, a tail. Checked against
// the in-place form (plain stores) for 1- to 8-byte outputs, every hoisted
// case (tensor-tensor, tensor-scalar, scalar-tensor), the strided loop, and a
// destination 4 bytes past alignment, at 1 and 2 threads.
TEST(Elementwise, LargeOutputsStream) {
  const int before = get_num_threads();
  const int64_t n = (int64_t(9) << 20) / 4 + 37;  // 9 MiB of floats, not a whole number of runs
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor a = arange(n, kFloat).remainder(1000), b = arange(n, kFloat).remainder(7).add(0.25);
    Tensor expected = a.clone();
    expected.mul_(b);
    EXPECT_TRUE(a.mul(b).equal(expected)) << threads;
    Tensor shifted = zeros({n + 1}, kFloat);
    Tensor out = shifted.narrow(0, 1, n);
    mul_out(out, a, b);
    EXPECT_TRUE(out.equal(expected)) << threads << " threads, misaligned out";
    EXPECT_EQ(shifted[0].item<float>(), 0.0f);
    // Scalar on either side, and a broadcast row through the strided loop.
    Tensor plus3 = a.clone();
    plus3.add_(3);
    EXPECT_TRUE(a.add(3).equal(plus3));
    EXPECT_TRUE(scalar_tensor(3.0f).add(a).equal(plus3));
    Tensor rows = a.narrow(0, 0, n / 1024 * 1024).view({-1, 1024});
    Tensor row = arange(1024, kFloat);
    Tensor by_row = rows.clone();
    by_row.sub_(row);
    EXPECT_TRUE(rows.sub(row).equal(by_row));
    // 8-, 2- and 1-byte outputs.
    Tensor ad = a.to(kDouble), bd = b.to(kDouble);
    Tensor ed = ad.clone();
    ed.div_(bd);
    EXPECT_TRUE(ad.div(bd).equal(ed));
    // 2- and 1-byte outputs need more elements to reach 8 MiB.
    const int64_t m = (int64_t(9) << 20) + 37;
    Tensor x = arange(m, kFloat).remainder(1000), y = arange(m, kFloat).remainder(13).mul(77);
    Tensor xs = x.to(kShort);
    Tensor es = xs.clone();
    es.add_(xs);
    EXPECT_TRUE(xs.add(xs.clone()).equal(es));
    Tensor lt = x.lt(y);
    EXPECT_EQ(lt.dtype(), kBool);
    Tensor lt_inplace = x.clone();
    lt_inplace.lt_(y);  // 0/1 in x's dtype, plain stores
    EXPECT_TRUE(lt.to(kFloat).equal(lt_inplace));
    EXPECT_EQ(lt[m - 1].item<bool>(), float((m - 1) % 1000) < float((m - 1) % 13 * 77));
    // Unary ops: against their in-place forms (plain stores), for float and
    // double, a misaligned out=, a 1-byte output and exp (which keeps plain
    // stores).
    for (const Tensor& v : {a.sub(500), ad.sub(500)}) {
      Tensor negated = v.clone();
      negated.neg_();
      EXPECT_TRUE(v.neg().equal(negated)) << v.dtype();
      Tensor rectified = v.clone();
      rectified.relu_();
      EXPECT_TRUE(v.relu().equal(rectified)) << v.dtype();
    }
    Tensor roots = a.clone();
    roots.sqrt_();
    EXPECT_TRUE(a.sqrt().equal(roots));
    neg_out(out, a);
    EXPECT_TRUE(out.neg().equal(a)) << "misaligned unary out";
    EXPECT_EQ(shifted[0].item<float>(), 0.0f);
    Tensor flipped = lt.logical_not();
    EXPECT_EQ(flipped[m - 1].item<bool>(), !lt[m - 1].item<bool>());
    EXPECT_TRUE(flipped.logical_not().equal(lt));
    EXPECT_EQ(flipped.sum().item<int64_t>(), m - lt.sum().item<int64_t>());
    Tensor small = a.mul(-0.01);
    Tensor exps = small.clone();
    exps.exp_();
    EXPECT_TRUE(small.exp().equal(exps));
  }
  set_num_threads(before);
}

namespace brasa {
namespace {

// Loops over tensors that no coalescing can flatten, with more dims than
// any fixed index array would hold (the strided loop once had 16 slots).
TEST(Elementwise, TwentyDimPermutedTensors) {
  DimVector shape(20, 2), reversed(20);
  for (int d = 0; d < 20; ++d) reversed[d] = 19 - d;
  Tensor x = arange(1 << 20, TensorOptions().dtype(kFloat)).view(shape);
  Tensor p = x.permute(reversed);  // every stride out of order
  Tensor doubled = (p * 2).permute(reversed);
  EXPECT_TRUE(doubled.equal(x * 2));
  Tensor copied = p.contiguous().permute(reversed);
  EXPECT_TRUE(copied.equal(x));
  EXPECT_EQ(p.to(kDouble).sum().item<double>(), double(int64_t(1) << 20) * ((1 << 20) - 1) / 2);
}

}  // namespace
}  // namespace brasa

namespace brasa {
namespace {

// Writes into a tensor whose elements share memory are errors (as libtorch);
// a copy between overlapping views of one storage reads the source first.
TEST(ElementwiseOverlap, CopyAndFillIntoExpandedTensorsAreErrorsOverlappingCopiesAreExact) {
  Tensor row = zeros({3});
  Tensor expanded = row.expand({2, 3});
  const char* shared = "more than one element of the written-to tensor refers to a single memory";
  EXPECT_ERROR(shared, expanded.copy_(ones({2, 3})));
  EXPECT_ERROR(shared, expanded.fill_(1));
  EXPECT_ERROR(shared, expanded.fill_(scalar_tensor(1)));
  EXPECT_ERROR(shared, expanded.zero_());
  EXPECT_ERROR(shared, expanded.add_(1));
  EXPECT_VALUES(row, {0, 0, 0});

  Tensor x = arange(5, TensorOptions().dtype(kFloat));
  x.slice(0, 1, 5).copy_(x.slice(0, 0, 4));  // shifted right by one
  EXPECT_VALUES(x, {0, 0, 1, 2, 3});
  Tensor y = arange(5, TensorOptions().dtype(kFloat));
  y.slice(0, 0, 4).copy_(y.slice(0, 1, 5));  // shifted left by one
  EXPECT_VALUES(y, {1, 2, 3, 4, 4});
  Tensor m = arange(9, TensorOptions().dtype(kFloat)).view({3, 3});
  m.copy_(m.t());
  EXPECT_VALUES(m, {0, 3, 6, 1, 4, 7, 2, 5, 8});
  Tensor same = arange(4, TensorOptions().dtype(kFloat));
  same.copy_(same.view({4}));  // the same elements: nothing to do
  EXPECT_VALUES(same, {0, 1, 2, 3});
}

}  // namespace
}  // namespace brasa

// Broadcast operands inside an otherwise contiguous loop (a gradient
// expanded from sum or mean): ternary ops read them from a repeated copy,
// and a binary op of two broadcast values is a fill. Lengths around the
// copy's chunk of 256, against the same ops on materialized operands.
TEST(Elementwise, BroadcastOperandsInContiguousLoops) {
  manual_seed(8);
  for (int64_t n : {1, 7, 255, 256, 257, 1000, 70000}) {
    SCOPED_TRACE(n);
    Tensor a = randn({n}), c = randn({n});
    Tensor g = tensor(0.75f).expand({n});
    Tensor dense = g.contiguous();
    EXPECT_TRUE(allclose(addcmul(a, g, c, 0.5), addcmul(a, dense, c, 0.5), 0, 0));
    EXPECT_TRUE(allclose(addcdiv(g, a, c.abs() + 1), addcdiv(dense, a, c.abs() + 1), 0, 0));
    EXPECT_TRUE(allclose(lerp(a, c, g), lerp(a, c, dense), 0, 0));
    Tensor q = g / tensor(3.0f).expand({n});
    EXPECT_TRUE(q.is_contiguous());
    EXPECT_TRUE(allclose(q, full({n}, 0.25f), 0, 0));
    EXPECT_TRUE(
        equal(pow(tensor(2.0).expand({n}), tensor(3.0).expand({n})), full({n}, 8.0, kDouble)));
  }
  // The mean's gradient is a broadcast view into smooth_l1's fused backward.
  Tensor x = randn({300, 7}).requires_grad_(), y = randn({300, 7});
  nn::functional::smooth_l1_loss(x, y).backward();
  Tensor d = (x.detach() - y);
  Tensor expect = where(d.abs() < 1, d, d.sign()) / 2100.0;
  EXPECT_TRUE(allclose(x.grad(), expect, 1e-6, 1e-9));
}

namespace brasa {
namespace {

// As in PyTorch, an op's output takes the layout of its first full-shape,
// dense, not broadcast input (channels-last, any permutation), so the loop
// walks memory in order; values are those of the contiguous computation.
TEST(ElementwiseLayout, OutputsKeepTheDenseLayoutOfTheirFirstFullInput) {
  manual_seed(3);
  Tensor x = randn({2, 3, 4, 5}), y = randn({2, 3, 4, 5}), bias = randn({3, 1, 1});
  Tensor cl = x.contiguous(MemoryFormat::ChannelsLast);
  Tensor ycl = y.contiguous(MemoryFormat::ChannelsLast);
  const std::vector<int64_t> cl_strides{60, 1, 15, 3};

  Tensor sig = sigmoid(cl);
  EXPECT_EQ(sig.strides().vec(), cl_strides);
  EXPECT_TRUE(allclose(sig, sigmoid(x), 0, 0));
  Tensor sum = cl + ycl;
  EXPECT_EQ(sum.strides().vec(), cl_strides);
  EXPECT_TRUE(allclose(sum, x + y, 0, 0));
  Tensor shifted = cl * 2 + bias;  // a broadcast bias keeps the layout
  EXPECT_EQ(shifted.strides().vec(), cl_strides);
  EXPECT_TRUE(allclose(shifted, x * 2 + bias, 0, 0));
  Tensor biased_first = bias - cl;  // the bias is not of the full shape
  EXPECT_EQ(biased_first.strides().vec(), cl_strides);
  EXPECT_TRUE(allclose(biased_first, bias - x, 0, 0));
  Tensor expanded_first = tensor(2.0f).expand({2, 3, 4, 5}) * cl;
  EXPECT_EQ(expanded_first.strides().vec(), cl_strides);

  // The first full input decides: a contiguous one gives a contiguous result.
  Tensor mixed = y + cl;
  EXPECT_TRUE(mixed.is_contiguous());
  EXPECT_TRUE(allclose(mixed, y + x, 0, 0));
  Tensor mixed_cl = cl + y;  // and a channels-last one a channels-last result
  EXPECT_EQ(mixed_cl.strides().vec(), cl_strides);
  EXPECT_TRUE(allclose(mixed_cl, x + y, 0, 0));

  // Any permutation, and a 3-input op.
  Tensor p = randn({5, 2, 4, 3}).permute({1, 3, 2, 0});  // [2, 3, 4, 5]
  Tensor q = where(p > 0, p, y);
  EXPECT_EQ(q.strides().vec(), p.strides().vec());
  EXPECT_TRUE(allclose(q, where(p.contiguous() > 0, p.contiguous(), y), 0, 0));
  Tensor lerped = lerp(p, y, 0.25);
  EXPECT_EQ(lerped.strides().vec(), p.strides().vec());
  EXPECT_TRUE(allclose(lerped, lerp(p.contiguous(), y, 0.25), 1e-6, 1e-6));

  // Not dense (a strided slice, a transposed slice): contiguous as before.
  Tensor every_other = randn({2, 3, 4, 10}).slice(3, 0, 10, 2);
  EXPECT_TRUE(exp(every_other).is_contiguous());
  EXPECT_TRUE(allclose(exp(every_other), exp(every_other.contiguous()), 0, 0));
  Tensor cut = randn({6, 8}).t().slice(0, 1, 7);
  EXPECT_TRUE((cut * 3).is_contiguous());

  // A user's permuted out= tensor is written in its own order.
  Tensor out = empty({5, 4, 3, 2}).permute({3, 2, 1, 0});
  mul_out(out, x, y);
  EXPECT_TRUE(allclose(out, x * y, 0, 0));
}

// The gradient of a channels-last input is channels-last too (the expanded
// gradient of a sum says nothing of a layout), and equals the contiguous one.
TEST(ElementwiseLayout, GradientsOfChannelsLastInputsKeepTheLayout) {
  manual_seed(4);
  Tensor base = randn({2, 3, 4, 5});
  Tensor cl = base.contiguous(MemoryFormat::ChannelsLast).requires_grad_();
  Tensor plain = base.clone().requires_grad_();
  nn::functional::leaky_relu(cl, 0.1).mul(cl).sum().backward();
  nn::functional::leaky_relu(plain, 0.1).mul(plain).sum().backward();
  EXPECT_TRUE(cl.grad().is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(allclose(cl.grad(), plain.grad(), 1e-6, 1e-6));
}

}  // namespace
}  // namespace brasa

namespace brasa {
namespace {

// Ternary ops over short innermost rows (a value broadcast along a middle
// dim, rows of 3 to 70) run rows in blocks: the same values as on
// materialized operands.
TEST(ElementwiseLayout, TernaryOpsOverShortBroadcastRows) {
  manual_seed(6);
  for (int64_t inner : {3, 10, 63, 64, 70}) {
    SCOPED_TRACE(inner);
    Tensor mask = randn({6, 50, inner}) > 0, a = randn({6, 50, inner});
    Tensor row = randn({6, 1, inner});
    Tensor spread = row.expand({6, 50, inner});
    Tensor dense = spread.contiguous();
    EXPECT_TRUE(equal(where(mask, spread, 0), where(mask, dense, 0)));
    EXPECT_TRUE(equal(where(mask, a, spread), where(mask, a, dense)));
    EXPECT_TRUE(allclose(addcmul(a, spread, a, 0.5), addcmul(a, dense, a, 0.5), 0, 0));
    EXPECT_TRUE(allclose(lerp(a, spread, 0.3), lerp(a, dense, 0.3), 0, 0));
    // A slice (every other row) as the first input: strided rows.
    Tensor rows = randn({6, 100, inner}).slice(1, 0, 100, 2);
    EXPECT_TRUE(equal(where(mask, rows, spread), where(mask, rows.contiguous(), dense)));
  }
}

// Binary ops over short rows whose outputs lie end to end (a value per row
// broadcast over a last dim of 1 to 15, rows of 16 and 17 for the edge) run
// in flat chunks of whole rows, a per-row input expanded first: the same
// values as on materialized operands, over more rows than one chunk holds,
// in float, double, int and bool, with either side per row, in place too.
TEST(ElementwiseLayout, BinaryOpsOverShortRowsEndToEnd) {
  manual_seed(7);
  for (int64_t n : {1, 2, 3, 7, 8, 15, 16, 17}) {
    SCOPED_TRACE(n);
    const int64_t m = 1500;  // 1500 * n: more than one chunk of 2048 for n > 1
    for (ScalarType t : {kFloat, kDouble, kInt}) {
      Tensor a = (randn({m, n}) * 10).to(t), per_row = (randn({m, 1}) * 10 + 20).to(t);
      Tensor dense = per_row.expand({m, n}).contiguous();
      EXPECT_TRUE(equal(a + per_row, a + dense));
      EXPECT_TRUE(equal(per_row - a, dense - a));
      EXPECT_TRUE(equal(per_row.expand({m, n}) * 3, dense * 3));
      EXPECT_TRUE(equal(per_row.expand({m, n}) * per_row, dense * dense));
      if (t != kInt) EXPECT_TRUE(equal(a / per_row, a / dense));
      EXPECT_TRUE(equal(a > per_row, a > dense));
      Tensor in_place = a.clone(), expected = a.clone();
      in_place.add_(per_row, 2);
      expected.add_(dense, 2);
      EXPECT_TRUE(equal(in_place, expected));
    }
    Tensor flags = randn({m, n}) > 0, row_flags = randn({m, 1}) > 0;
    EXPECT_TRUE(equal(flags.logical_and(row_flags),
                      flags.logical_and(row_flags.expand({m, n}).contiguous())));
  }
  // The gradient of a mean over a last dim of 3: 1/3 everywhere.
  Tensor x = randn({5000, 3}).requires_grad_(true);
  x.mean(-1).sum().backward();
  EXPECT_TRUE(allclose(x.grad(), full({5000, 3}, 1.0 / 3), 1e-7, 0));
}

}  // namespace
}  // namespace brasa
