#pragma once
// The shm backend's direct collectives (shm_direct.cpp): they move data
// straight between the ranks' tensors, mapped when in shared memory, by
// cross-memory attach when private. Each returns false, having done nothing,
// when the collective is too small or some rank's tensor cannot be reached;
// the caller then stages through the slots. Internal to brasa_comm.

#include <brasa/comm/types.h>
#include <brasa/tensor/tensor.h>

#include <cstdint>
#include <vector>

#include "shm_impl.h"

namespace brasa::distributed::shm_detail {

// In-place allreduce of the contiguous `buf`.
bool allreduce_direct(Group* g, const Tensor& buf, ReduceOp op);
// Broadcast of the contiguous `buf` from `root`.
bool broadcast_direct(Group* g, const Tensor& buf, int root);
// Rank p's input `in` lands at outs[p] on every rank (root < 0) or on `root`.
bool gather_direct(Group* g, const Tensor& in, const std::vector<char*>& outs, int root);
// Rank r's `out` (n elements) receives the reduction of every rank's block r of `in`.
bool reduce_scatter_direct(Group* g, const Tensor& in, char* out, int64_t n, ScalarType dtype,
                           ReduceOp op);

}  // namespace brasa::distributed::shm_detail
