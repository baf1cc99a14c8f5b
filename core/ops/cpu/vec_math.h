#pragma once
// Branch-free math the compiler can vectorize (the libm calls cannot be).
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>

namespace brasa::cpu {

// exp(x) for float, within ~2 ulp: x = n ln2 + r with |r| <= ln2/2, a degree-7
// Taylor polynomial for e^r, and 2^n built from its exponent bits (split in two
// factors so that results down to the subnormal range stay right).
inline float fast_exp(float x) {
  const float kLog2e = 1.44269504088896341f;
  const float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  float xc = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);
  // Round to nearest by the 1.5 * 2^23 trick (vectorizes; roundevenf does not).
  const float kShift = 12582912.0f;
  float n = (xc * kLog2e + kShift) - kShift;
  float r = xc - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t ni = static_cast<int32_t>(n);
  int32_t n1 = ni >> 1, n2 = ni - n1;
  float s1 = std::bit_cast<float>(static_cast<uint32_t>(n1 + 127) << 23);
  float s2 = std::bit_cast<float>(static_cast<uint32_t>(n2 + 127) << 23);
  float res = p * s1 * s2;
  res = x > 88.7228394f ? std::numeric_limits<float>::infinity() : res;
  res = x < -103.972084f ? 0.0f : res;
  return x != x ? x : res;
}

// exp(x) for x <= 0 that is not NaN (softmax's x - max): fast_exp without
// the overflow and NaN cases and with one scaling factor. Results below the
// smallest normal float (x < -87.33) are 0 instead of subnormal.
inline float fast_exp_nonpositive(float x) {
  const float kLog2e = 1.44269504088896341f;
  const float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  const float kMin = -87.33654475f;  // ln of the smallest normal float
  float xc = x < kMin ? kMin : x;
  const float kShift = 12582912.0f;
  float n = (xc * kLog2e + kShift) - kShift;
  float r = xc - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  float scale = std::bit_cast<float>(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23);
  return x < kMin ? 0.0f : p * scale;
}

}  // namespace brasa::cpu
