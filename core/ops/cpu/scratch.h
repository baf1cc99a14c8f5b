#pragma once
// Scratch memory for CPU kernels. Internal to core/ops.
#include <brasa/ops/cpu/variant.h>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {

// Sizes `buffer` to hold n values from a cache-line boundary and returns
// that boundary. From std::vector's 16-byte alignment, half of the 32-byte
// vector accesses to a buffer straddle two lines.
template <class T>
T* cache_aligned_scratch(std::vector<T>& buffer, std::size_t n) {
  buffer.resize(n + 64 / sizeof(T));
  return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(buffer.data()) + 63) / 64 * 64);
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
