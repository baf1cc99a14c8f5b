#pragma once
// Branch-free math the compiler can vectorize (the libm calls cannot be).
#include <brasa/ops/cpu/variant.h>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#ifdef BRASA_CPU_HAS_AVX2
#include <immintrin.h>
#define BRASA_VEC_EXP8 1
#endif

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {

// exp's range reduction: x = n ln2 + r with |r| <= ln2/2 (ln2 in two parts so
// that r keeps its precision), n rounded to nearest by the 1.5 * 2^23 trick
// (vectorizes; roundevenf does not).
inline void exp_reduce(float x, float& n, float& r) {
  const float kLog2e = 1.44269504088896341f;
  const float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  const float kShift = 12582912.0f;
  n = (x * kLog2e + kShift) - kShift;
  r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
}

// e^r for |r| <= ln2/2: a degree-7 Taylor polynomial.
inline float exp_reduced(float r) {
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  return p * r + 1.0f;
}

// 2^n as a float, for -126 <= n <= 127.
inline float exp2_int(int32_t n) {
  return std::bit_cast<float>(static_cast<uint32_t>(n + 127) << 23);
}

// exp(x) for float, within ~2 ulp; 2^n is applied as two factors so that
// results down to the subnormal range stay right.
// Always inlined, as the others below: called from many loops of a file, GCC
// stopped inlining it (an out-of-line call per element, no vectorization:
// SiLU at 0.9 ns an element against sigmoid's 0.07).
[[gnu::always_inline]] inline float fast_exp(float x) {
  float xc = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);
  float n, r;
  exp_reduce(xc, n, r);
  const int32_t ni = static_cast<int32_t>(n), n1 = ni >> 1;
  float res = exp_reduced(r) * exp2_int(n1) * exp2_int(ni - n1);
  res = x > 88.7228394f ? std::numeric_limits<float>::infinity() : res;
  res = x < -103.972084f ? 0.0f : res;
  return x != x ? x : res;
}

// exp(x) for x <= 0 that is not NaN (softmax's x - max; also right up to
// x = 88): fast_exp without the overflow and NaN cases and with one scaling
// factor. Results below the
// smallest normal float (x < -87.33) are 0 instead of subnormal.
inline float fast_exp_nonpositive(float x) {
  const float kMin = -87.33654475f;  // ln of the smallest normal float
  float n, r;
  exp_reduce(x < kMin ? kMin : x, n, r);
  return x < kMin ? 0.0f : exp_reduced(r) * exp2_int(static_cast<int32_t>(n));
}

// tanh(x) for float within 2 ulp, branch-free so that loops over it
// vectorize: below |x| = 0.625 the odd minimax polynomial of Cephes' tanhf
// (x + x^3 P(x^2); 1 - 2 / (e^2x + 1) would lose the small values'
// relative precision), above it 1 - 2 / (e^2|x| + 1) with the sign put back
// (+-1 from |x| = 9 on, where e^2|x| rounds the quotient away; inf gives +-1,
// NaN NaN).
[[gnu::always_inline]] inline float fast_tanh(float x) {
  const float a = x < 0.0f ? -x : x;
  const float s = x * x;
  float p = -5.70498872745e-3f;
  p = p * s + 2.06390887954e-2f;
  p = p * s - 5.37397155531e-2f;
  p = p * s + 1.33314422036e-1f;
  p = p * s - 3.33332819422e-1f;
  const float small = x == 0.0f ? x : p * s * x + x;  // (keeps -0's sign)
  const float big = 1.0f - 2.0f / (fast_exp(2.0f * a) + 1.0f);
  return a < 0.625f ? small : (x < 0.0f ? -big : big);
}

// exp by type, for loops templated on it: fast_exp for float (and the
// 16-bit floats, computed in float), which vectorizes; libm for double.
[[gnu::always_inline]] inline float exp_of(float x) { return fast_exp(x); }
inline double exp_of(double x) { return std::exp(x); }

// log(1 + u) for float u in [0, 1], branch-free: 2 atanh(s) with s = u / (2 +
// u) in [0, 1/3], by its odd series to s^13 (truncation under 1e-8), so that
// small u keep their relative precision (no 1 + u rounding).
[[gnu::always_inline]] inline float fast_log1p_unit(float u) {
  const float s = u / (2.0f + u), s2 = s * s;
  float p = 1.0f / 13;
  p = p * s2 + 1.0f / 11;
  p = p * s2 + 1.0f / 9;
  p = p * s2 + 1.0f / 7;
  p = p * s2 + 1.0f / 5;
  p = p * s2 + 1.0f / 3;
  p = p * s2 + 1.0f;
  return 2.0f * s * p;
}

// pow(a, b) for floats with C's special cases (as libm's powf and PyTorch),
// branch-free so that loops over it vectorize: 2^(b log2|a|) worked in
// double, so the one rounding to float leaves the result correctly rounded
// but for ties closer than ~1e-13 relative (libm: 0.82 ulp). log2 by
// 2 atanh(s) over a mantissa in [sqrt(1/2), sqrt(2)) (|s| <= 0.1716, the
// series to s^15: 3e-14 relative), 2^f for |f| <= 1/2 by a degree-12
// Taylor polynomial of e^(f ln2) (2e-16). b log2|a| is clamped to +-300,
// beyond any float, so the conversion to float gives inf, the subnormals
// and 0 with their correct rounding.
[[gnu::always_inline]] inline float fast_powf(float a, float b) {
  const double d = std::abs(static_cast<double>(a)), y = b;
  const uint64_t bits = std::bit_cast<uint64_t>(d);
  // d = m 2^e with m in [1, 2); a nonzero float is a normal double.
  double m = std::bit_cast<double>((bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
  // e as a double without an int64 conversion: the biased exponent
  // field's integer placed in a double's mantissa, minus the bias's double.
  double e =
      std::bit_cast<double>((bits >> 52) | 0x4330000000000000ULL) - (4503599627370496.0 + 1023);
  const bool high = m > 1.4142135623730951;
  m = high ? 0.5 * m : m;
  e = high ? e + 1 : e;
  const double s = (m - 1) / (m + 1), s2 = s * s;
  double p = 1.0 / 15;
  p = p * s2 + 1.0 / 13;
  p = p * s2 + 1.0 / 11;
  p = p * s2 + 1.0 / 9;
  p = p * s2 + 1.0 / 7;
  p = p * s2 + 1.0 / 5;
  p = p * s2 + 1.0 / 3;
  p = p * s2 + 1;
  double l = e + 2 * s * p * 1.4426950408889634;  // log2 d
  l = d == 0 ? -std::numeric_limits<double>::infinity() : l;
  l = d == std::numeric_limits<double>::infinity() || d != d ? d : l;
  double t = y * l;
  t = t > 300 ? 300 : t;  // NaN stays NaN
  t = t < -300 ? -300 : t;
  // t = k + f, k the nearest integer (the 1.5 * 2^52 trick), |f| <= 1/2.
  const double shifted = t + 6755399441055744.0;
  const double k = shifted - 6755399441055744.0, r = (t - k) * 0.6931471805599453;
  double q = 1.0 / 479001600;
  q = q * r + 1.0 / 39916800;
  q = q * r + 1.0 / 3628800;
  q = q * r + 1.0 / 362880;
  q = q * r + 1.0 / 40320;
  q = q * r + 1.0 / 5040;
  q = q * r + 1.0 / 720;
  q = q * r + 1.0 / 120;
  q = q * r + 1.0 / 24;
  q = q * r + 1.0 / 6;
  q = q * r + 0.5;
  q = q * r + 1;
  q = q * r + 1;
  // 2^k from k's low bits: the low 32 bits of `shifted` hold k.
  const uint64_t k_bits = std::bit_cast<uint64_t>(shifted) + 1023;
  float result = static_cast<float>(q * std::bit_cast<double>(k_bits << 52));
  result = t != t ? std::numeric_limits<float>::quiet_NaN() : result;
  // A negative base: odd integer exponents keep its sign; a finite
  // non-integer one gives NaN (but -0 and -inf take such powers).
  const float b_floor = std::floor(b);
  const bool integer = b_floor == b;
  const bool odd = integer && std::abs(b) < 16777216.0f &&
                   (static_cast<int32_t>(std::abs(b) < 16777216.0f ? b : 0) & 1) != 0;
  const bool negative = std::signbit(a);
  result = negative && odd ? -result : result;
  result = a < 0 && a > -std::numeric_limits<float>::infinity() && !integer
               ? std::numeric_limits<float>::quiet_NaN()
               : result;
  // pow(x, 0) = 1 even for NaN x; pow(1, y) = 1 even for NaN y; pow(-1, +-inf) = 1.
  result = b == 0 || a == 1 || (a == -1 && std::abs(b) == std::numeric_limits<float>::infinity())
               ? 1.0f
               : result;
  return result;
}

// 1 / (1 + e^-x) for float, branch-free (e^-x overflows to inf for x below
// -88.7, which gives 0; NaN stays NaN).
[[gnu::always_inline]] inline float fast_sigmoid(float x) { return 1.0f / (1.0f + fast_exp(-x)); }

#ifdef BRASA_VEC_EXP8
// 1.5 * 2^23: added to x * 8/ln2, it leaves k, the nearest integer, in the
// low mantissa bits.
inline __m256 exp_shift_8() { return _mm256_set1_ps(12582912.0f); }

// The fine reduction shared by exp_nonpositive_8 and exp_8: x = (k/8) ln2 + r
// with |r| <= ln2/16, k left in the low mantissa bits of `t` (x * 8/ln2 +
// exp_shift_8()); returns e^r from a degree-3 polynomial (minimax for relative
// error, 0.43 ulp).
inline __m256 exp_fine_reduction_8(__m256 x, __m256& t) {
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  t = _mm256_fmadd_ps(x, _mm256_set1_ps(8 * kLog2e), exp_shift_8());
  const __m256 k = _mm256_sub_ps(t, exp_shift_8());
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(kLn2Hi / 8), x);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(kLn2Lo / 8), r);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(0.166668668f), r, _mm256_set1_ps(0.500064492f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  return _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
}

// exp(x) for 8 floats x <= 0 (and up to x = 88, which softmax's shifts by
// the max so far can reach), within 2 ulp where the result is a normal
// float. Lanes below -88 give 0, NaN lanes NaN (softmax finds NaN rows by
// their sum); lanes in (-88, -87.34), whose exp is below the smallest
// normal float, give a value below it.
// Cheap through a fine reduction, x = (k/8) ln2 + r with |r| <= ln2/16,
// which leaves e^r to a degree-3 polynomial (minimax for relative error,
// 0.43 ulp); 2^(k/8) is 2^(k>>3) times one of eight table values picked by
// k's low bits (vpermps). Every instruction counts here (softmax is bound
// by this function's throughput): the clamp to -88 replaces a compare and
// a mask, since there the scale's exponent field comes out as 0.
inline __m256 exp_nonpositive_8(__m256 x) {
  // 2^(j/8) with j << 20 taken off: adding k << 20 below both restores it and
  // puts k >> 3 into the exponent field.
  const __m256i table = _mm256_setr_epi32(std::bit_cast<int32_t>(1.0f),
                                          std::bit_cast<int32_t>(1.0905077326652577f) - (1 << 20),
                                          std::bit_cast<int32_t>(1.189207115002721f) - (2 << 20),
                                          std::bit_cast<int32_t>(1.2968395546510096f) - (3 << 20),
                                          std::bit_cast<int32_t>(1.4142135623730951f) - (4 << 20),
                                          std::bit_cast<int32_t>(1.5422108254079407f) - (5 << 20),
                                          std::bit_cast<int32_t>(1.6817928305074290f) - (6 << 20),
                                          std::bit_cast<int32_t>(1.8340080864093424f) - (7 << 20));
  __m256 t;
  // NaN stays (maxps returns its second operand).
  const __m256 p = exp_fine_reduction_8(_mm256_max_ps(_mm256_set1_ps(-88.0f), x), t);
  const __m256i kbits = _mm256_castps_si256(t);
  const __m256i scale =
      _mm256_add_epi32(_mm256_permutevar8x32_epi32(table, kbits), _mm256_slli_epi32(kbits, 20));
  return _mm256_mul_ps(p, _mm256_castsi256_ps(scale));
}

// exp(x) for 8 floats over the whole float range, within 2 ulp where the
// result is a normal float: exp_nonpositive_8's reduction and polynomial,
// with 2^(k>>3) applied as two factors so that results down into the
// subnormals (x to -103.97) and up to the largest float (x to 88.72) come
// out right. Below and above those, 0 and +inf; NaN stays NaN.
inline __m256 exp_8(__m256 x) {
  const __m256 table = _mm256_setr_ps(1.0f, 1.0905077326652577f, 1.189207115002721f,
                                      1.2968395546510096f, 1.4142135623730951f, 1.5422108254079407f,
                                      1.6817928305074290f, 1.8340080864093424f);  // 2^(j/8)
  // Clamped to [-104, 89] (maxps and minps return their second operand, x,
  // when it is NaN).
  x = _mm256_min_ps(_mm256_set1_ps(89.0f), _mm256_max_ps(_mm256_set1_ps(-104.0f), x));
  __m256 t;
  __m256 p = exp_fine_reduction_8(x, t);
  // k in [-1200, 1027]; 2^(k>>3) as 2^e1 * 2^e2, each exponent in [-75, 64].
  const __m256i k = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(exp_shift_8()));
  const __m256i e = _mm256_srai_epi32(k, 3), e1 = _mm256_srai_epi32(e, 1);
  const __m256i e2 = _mm256_sub_epi32(e, e1), bias = _mm256_set1_epi32(127);
  const __m256 f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e1, bias), 23));
  const __m256 f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e2, bias), 23));
  p = _mm256_mul_ps(p, _mm256_permutevar8x32_ps(table, k));  // the index is k's low 3 bits
  return _mm256_mul_ps(_mm256_mul_ps(p, f1), f2);
}
#endif

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
