#pragma once
// The reduction of the shared-memory backend: many inputs into one output in
// one pass, so that each element is read once from each rank's buffer and
// rounded once (fp16/bf16 accumulate in float). Internal to brasa_comm.

#include <brasa/comm/types.h>
#include <brasa/tensor/scalar_type.h>

#include <cstdint>

namespace brasa::distributed::shm_detail {

// out[i] = op over k < count of inputs[k][i], for i < n elements of `dtype`.
// AVG divides the sum by `count`; for bool, SUM and MAX are "any", PRODUCT
// and MIN "all", as in PyTorch. `out` may be one of the inputs.
void reduce_into(void* out, const void* const* inputs, int count, int64_t n, ScalarType dtype,
                 ReduceOp op);

}  // namespace brasa::distributed::shm_detail
