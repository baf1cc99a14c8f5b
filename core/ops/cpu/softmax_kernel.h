#pragma once
// The float32 softmax / log_softmax kernel over contiguous rows. Internal to
// ops/reduction.cpp.
#include <cstdint>

namespace brasa::cpu {

// out[k, :] = softmax(in[k, :]) (or log_softmax) for K rows of R floats.
// A row holding NaN gives NaN everywhere, as does a row of only -inf (0/0).
void softmax_rows_float(const float* in, float* out, int64_t K, int64_t R, bool log);

}  // namespace brasa::cpu
