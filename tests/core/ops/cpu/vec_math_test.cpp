// The vectorized math behind the float kernels, against libm in double.
#include <gtest/gtest.h>
// After the common headers: vec_math.h switches the rest of the file to AVX2.
#include <brasa/ops/cpu/vec_math.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <utility>

namespace brasa::cpu {
namespace {

// This file is compiled as the AVX2 variant (tests/core/CMakeLists.txt).
#define SKIP_WITHOUT_AVX2()                                              \
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) \
  GTEST_SKIP() << "no AVX2+FMA on this CPU"

// |got - want| in units of the last place of `want` as a float.
double ulps(float got, double want) {
  return std::fabs(got - want) / std::ldexp(1.0, std::ilogb(static_cast<float>(want)) - 23);
}

TEST(VecMath, FastExpWithinTwoUlps) {
  SKIP_WITHOUT_AVX2();
  double worst = 0;
  for (float x = -87.0f; x <= 88.0f; x += 0.0037f)
    worst = std::max(worst, ulps(fast_exp(x), std::exp(double(x))));
  EXPECT_LE(worst, 2.0);
  EXPECT_EQ(fast_exp(0.0f), 1.0f);
  EXPECT_EQ(fast_exp(-INFINITY), 0.0f);
  EXPECT_EQ(fast_exp(100.0f), INFINITY);
  EXPECT_TRUE(std::isnan(fast_exp(NAN)));
}

// tanh: every 256th float bit pattern up to |x| = 12 on both sides (the
// polynomial below 0.625, the exp form above), within 2 ulps of libm in
// double; the special values exactly.
TEST(VecMath, FastTanhWithinTwoUlps) {
  SKIP_WITHOUT_AVX2();
  double worst = 0;
  float worst_x = 0;
  for (float sign : {-1.0f, 1.0f})
    for (uint32_t b = std::bit_cast<uint32_t>(FLT_MIN); b <= std::bit_cast<uint32_t>(12.0f);
         b += 256) {
      const float x = sign * std::bit_cast<float>(b);
      const double u = ulps(fast_tanh(x), std::tanh(double(x)));
      if (u > worst) worst = u, worst_x = x;
    }
  EXPECT_LE(worst, 2.0) << "at x = " << worst_x;
  EXPECT_EQ(fast_tanh(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(fast_tanh(-0.0f)));
  EXPECT_EQ(fast_tanh(1e-30f), 1e-30f);
  EXPECT_EQ(fast_tanh(20.0f), 1.0f);
  EXPECT_EQ(fast_tanh(-1e30f), -1.0f);
  EXPECT_EQ(fast_tanh(INFINITY), 1.0f);
  EXPECT_EQ(fast_tanh(-INFINITY), -1.0f);
  EXPECT_TRUE(std::isnan(fast_tanh(NAN)));
}

TEST(VecMath, FastSigmoidWithinThreeUlps) {
  SKIP_WITHOUT_AVX2();
  double worst = 0;
  for (float x = -87.0f; x <= 30.0f; x += 0.0031f)
    worst = std::max(worst, ulps(fast_sigmoid(x), 1.0 / (1.0 + std::exp(-double(x)))));
  EXPECT_LE(worst, 3.0);
  EXPECT_EQ(fast_sigmoid(0.0f), 0.5f);
  EXPECT_EQ(fast_sigmoid(100.0f), 1.0f);
  EXPECT_EQ(fast_sigmoid(-200.0f), 0.0f);
  EXPECT_EQ(fast_sigmoid(-INFINITY), 0.0f);
  EXPECT_TRUE(std::isnan(fast_sigmoid(NAN)));
}

#ifdef BRASA_VEC_EXP8
// One lane of an 8-wide exp on x in every lane.
template <__m256 (*F)(__m256)>
float lane(float x) {
  alignas(32) float out[8];
  _mm256_store_ps(out, F(_mm256_set1_ps(x)));
  return out[3];
}
float exp8_lane(float x) { return lane<exp_nonpositive_8>(x); }
float exp8_full_lane(float x) { return lane<exp_8>(x); }

// The worst ulp error of `f` against libm at every 1024th float in [-low,
// high] (stepping through the bit patterns of the magnitudes, on both sides
// of 0), with where it was.
std::pair<double, float> worst_ulps(float (*f)(float), float low, float high) {
  double worst = 0;
  float worst_x = 0;
  for (float sign : {-1.0f, 1.0f}) {
    const uint32_t last = std::bit_cast<uint32_t>(sign < 0 ? low : high);
    for (uint32_t b = 0; b <= last; b += 1024) {
      const float x = sign * std::bit_cast<float>(b);
      const double u = ulps(f(x), std::exp(double(x)));
      if (u > worst) worst = u, worst_x = x;
    }
  }
  return {worst, worst_x};
}

TEST(VecMath, ExpNonpositive8WithinTwoUlps) {
  SKIP_WITHOUT_AVX2();
  const auto [worst, at] = worst_ulps(exp8_lane, 87.3f, 88.0f);
  EXPECT_LE(worst, 2.0) << "at x = " << at;
  EXPECT_EQ(exp8_lane(0.0f), 1.0f);
}

TEST(VecMath, ExpNonpositive8UnderflowAndNaN) {
  SKIP_WITHOUT_AVX2();
  // Below -88 and at -infinity: exactly 0; NaN stays NaN. Just above -88
  // the exact value is below the smallest normal float; so is the result.
  for (float x : {-88.0f, -88.5f, -100.0f, -1e30f, -INFINITY}) EXPECT_EQ(exp8_lane(x), 0.0f) << x;
  EXPECT_TRUE(std::isnan(exp8_lane(NAN)));
  for (float x : {-87.99f, -87.7f, -87.4f}) {
    EXPECT_GE(exp8_lane(x), 0.0f) << x;
    EXPECT_LT(exp8_lane(x), FLT_MIN) << x;
  }
  // The smallest normal result.
  EXPECT_LE(ulps(exp8_lane(-87.33f), std::exp(double(-87.33f))), 2.0);
}

TEST(VecMath, Exp8WholeRange) {
  SKIP_WITHOUT_AVX2();
  // Where the result is a normal float.
  const auto [worst, at] = worst_ulps(exp8_full_lane, 87.33f, 88.72f);
  EXPECT_LE(worst, 2.0) << "at x = " << at;
  // Subnormal results: within two units of the smallest subnormal.
  const double unit = std::ldexp(1.0, -149);
  for (float x = -103.9f; x < -87.34f; x += 0.0131f)
    EXPECT_LE(std::fabs(exp8_full_lane(x) - std::exp(double(x))), 2 * unit) << x;
  EXPECT_EQ(exp8_full_lane(0.0f), 1.0f);
  EXPECT_EQ(exp8_full_lane(-104.0f), 0.0f);
  EXPECT_EQ(exp8_full_lane(-INFINITY), 0.0f);
  EXPECT_EQ(exp8_full_lane(88.73f), INFINITY);
  EXPECT_EQ(exp8_full_lane(1e30f), INFINITY);
  EXPECT_EQ(exp8_full_lane(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(exp8_full_lane(NAN)));
  EXPECT_LT(exp8_full_lane(88.72f), FLT_MAX);
}
#endif

// pow: libm's special cases bit for bit (signs of zeros and infinities,
// NaNs, the integer-exponent rules of negative bases), and ordinary values
// over the whole float range rounded as pow in double rounds them.
TEST(VecMath, FastPowfMatchesLibm) {
  SKIP_WITHOUT_AVX2();
  const float specials[] = {0.0f,  -0.0f, 1.0f,   -1.0f, 2.0f,     -2.0f,     0.5f,
                            -0.5f, 3.0f,  -3.0f,  0.75f, -0.25f,   1e-40f,    -1e-40f,
                            1e30f, 1e38f, -1e38f, 0.3f,  INFINITY, -INFINITY, NAN};
  for (float a : specials)
    for (float b : specials) {
      const float want = std::pow(a, b), got = fast_powf(a, b);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << a << " ^ " << b;
      } else {
        EXPECT_EQ(got, want) << a << " ^ " << b;
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << a << " ^ " << b;
      }
    }
  uint32_t state = 12345;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  int off_by_rounding = 0;
  for (int i = 0; i < 200000; ++i) {
    // Bases over every exponent of the floats, subnormals included;
    // exponents in [-12, 12], half of them integers.
    const float a = std::bit_cast<float>(next() & 0x7fffffffu);
    if (!std::isfinite(a)) continue;
    float b = static_cast<float>(static_cast<int32_t>(next() % 24001) - 12000) / 1000.0f;
    if (i % 2) b = std::round(b);
    const float base = i % 4 == 1 ? -a : a;  // negative bases with integer exponents
    const float want = static_cast<float>(std::pow(static_cast<double>(base), double(b)));
    const float got = fast_powf(base, b);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << base << " ^ " << b;
      continue;
    }
    if (got != want) {
      ++off_by_rounding;
      EXPECT_LE(std::fabs(double(got) - double(want)), std::fabs(double(want)) * 1.2e-7)
          << base << " ^ " << b;
    }
  }
  EXPECT_LE(off_by_rounding, 2);
}

}  // namespace
}  // namespace brasa::cpu
