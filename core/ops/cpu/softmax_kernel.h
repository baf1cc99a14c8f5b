#pragma once
// The float32 softmax / log_softmax kernel over contiguous rows. Internal to
// ops/reduction.cpp.
#include <brasa/ops/cpu/variant.h>
#include <cstdint>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {

// out[k, :] = softmax(in[k, :]) (or log_softmax) for K rows of R floats.
// A row holding NaN gives NaN everywhere, as does a row of only -inf (0/0).
void softmax_rows_float(const float* in, float* out, int64_t K, int64_t R, bool log);

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
