#pragma once
// Branch-free math the compiler can vectorize (the libm calls cannot be).
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>

namespace brasa::cpu {

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
inline float exp2_int(int32_t n) { return std::bit_cast<float>(static_cast<uint32_t>(n + 127) << 23); }

// exp(x) for float, within ~2 ulp; 2^n is applied as two factors so that
// results down to the subnormal range stay right.
inline float fast_exp(float x) {
  float xc = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);
  float n, r;
  exp_reduce(xc, n, r);
  const int32_t ni = static_cast<int32_t>(n), n1 = ni >> 1;
  float res = exp_reduced(r) * exp2_int(n1) * exp2_int(ni - n1);
  res = x > 88.7228394f ? std::numeric_limits<float>::infinity() : res;
  res = x < -103.972084f ? 0.0f : res;
  return x != x ? x : res;
}

// exp(x) for x <= 0 that is not NaN (softmax's x - max): fast_exp without
// the overflow and NaN cases and with one scaling factor. Results below the
// smallest normal float (x < -87.33) are 0 instead of subnormal.
inline float fast_exp_nonpositive(float x) {
  const float kMin = -87.33654475f;  // ln of the smallest normal float
  float n, r;
  exp_reduce(x < kMin ? kMin : x, n, r);
  return x < kMin ? 0.0f : exp_reduced(r) * exp2_int(static_cast<int32_t>(n));
}

}  // namespace brasa::cpu
