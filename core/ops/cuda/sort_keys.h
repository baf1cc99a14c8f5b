#pragma once
// The keys the CUDA row sort hands to CUB: every dtype is mapped to the
// unsigned integer of its width whose unsigned order is the sort order, so
// that CUB's radix sorts are compiled for four key types, ascending only,
// instead of for every dtype in both directions (each such instantiation
// costs tens of seconds of nvcc). Plain C++ so the mapping is tested on the
// host (tests/core/ops/cuda/sort_keys_test.cpp).
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define BRASA_SORT_KEY_FN __host__ __device__ __forceinline__
#else
#define BRASA_SORT_KEY_FN inline
#endif

namespace brasa::cuda::kernels {

// The float order as unsigned bits: negatives below positives, larger
// magnitudes further from zero; -0 and +0 one key, every NaN one key above
// +inf (NaN sorts last ascending and first descending, as in PyTorch; the
// sort being stable, equal keys keep their input order). `exponent_mask`
// holds the exponent's bits (0x7c00 for half, 0x7f80 for bfloat16, ...).
template <class U>
BRASA_SORT_KEY_FN U float_sort_key(U bits, U exponent_mask) {
  static_assert(std::is_unsigned_v<U>);
  const U sign = static_cast<U>(U(1) << (sizeof(U) * 8 - 1));
  const U magnitude = static_cast<U>(bits & static_cast<U>(~sign));
  if (magnitude > exponent_mask) return static_cast<U>(~U(0));  // NaN (mantissa set)
  if (magnitude == 0) return sign;                              // either zero
  return (bits & sign) ? static_cast<U>(~bits) : static_cast<U>(bits | sign);
}

// Two's complement order as unsigned bits: flip the sign bit.
template <class U>
BRASA_SORT_KEY_FN U signed_sort_key(U bits) {
  static_assert(std::is_unsigned_v<U>);
  return static_cast<U>(bits ^ static_cast<U>(U(1) << (sizeof(U) * 8 - 1)));
}

// A descending sort is the ascending sort of the complemented keys (the
// radix sort is stable, so ties still keep their input order).
template <class U>
BRASA_SORT_KEY_FN U descending_sort_key(U key) {
  return static_cast<U>(~key);
}

}  // namespace brasa::cuda::kernels
