#pragma once
// An 8x8 block of 32-bit values transposed in registers (AVX2 and up): the
// copy kernel's blocked transposes and the FFT's staging of rows into
// vector lanes share it.
#include <brasa/ops/cpu/variant.h>

#include <cstdint>

#ifdef BRASA_CPU_HAS_AVX2
#include <immintrin.h>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {

// dst[i * dr + j] = src[j * sc + i] for an 8x8 block of 32-bit values: eight
// row loads, three rounds of shuffles, eight row stores.
inline void transpose_8x8_32bit(const uint32_t* src, int64_t sc, uint32_t* dst, int64_t dr) {
  const float* s = reinterpret_cast<const float*>(src);
  float* d = reinterpret_cast<float*>(dst);
  __m256 r[8], t[8], u[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(s + k * sc);
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);  // a0 b0 a1 b1 | a4 b4 a5 b5
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));  // a0 b0 c0 d0 | a4 b4 c4 d4
    u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(d + k * dr, _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
    _mm256_storeu_ps(d + (k + 4) * dr, _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
  }
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
#endif
