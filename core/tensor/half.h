#pragma once
// 16-bit floating types. Arithmetic converts to float and back, like c10::Half.
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>

namespace brasa {

namespace detail {
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// IEEE binary16 <-> binary32, round to nearest even.
inline uint16_t float_to_half_bits(float f) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u)
    return static_cast<uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (ax < 0x38800000u) {                                               // subnormal or zero
    float v = bits_float(ax) + 0.5f;  // align so that the low bits hold the half subnormal
    return static_cast<uint16_t>(sign | (float_bits(v) - 0x3f000000u));
  }
  uint32_t mant_odd = (ax >> 13) & 1u;
  ax += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round
  return static_cast<uint16_t>(sign | (ax >> 13));
}
inline float half_bits_to_float(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // 2^-24
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}
inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}
}  // namespace detail

struct Half {
  uint16_t x = 0;
  Half() = default;
  Half(float f) : x(detail::float_to_half_bits(f)) {}
  operator float() const { return detail::half_bits_to_float(x); }
  static Half from_bits(uint16_t b) {
    Half h;
    h.x = b;
    return h;
  }
};

struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f) : x(detail::float_to_bf16_bits(f)) {}
  operator float() const { return detail::bits_float(static_cast<uint32_t>(x) << 16); }
  static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.x = b;
    return h;
  }
};

inline std::ostream& operator<<(std::ostream& os, Half h) { return os << static_cast<float>(h); }
inline std::ostream& operator<<(std::ostream& os, BFloat16 h) {
  return os << static_cast<float>(h);
}

}  // namespace brasa
