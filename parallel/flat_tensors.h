#pragma once
// Several tensors as one flat 1-D tensor and back: how a group of tensors of
// one dtype travels in a single collective (coalesced broadcasts, PowerSGD's
// batched allreduces).
#include <brasa/ops/shape.h>
#include <brasa/tensor/tensor.h>

#include <vector>

namespace brasa::nn::parallel::detail {

inline Tensor flatten_all(const std::vector<Tensor>& ts) {
  std::vector<Tensor> flat;
  for (const Tensor& t : ts) flat.push_back(t.reshape({-1}));
  return cat(flat);
}

// Copies consecutive parts of `flat` back into `ts` (shapes kept).
inline void unflatten_into(const Tensor& flat, std::vector<Tensor>& ts) {
  int64_t offset = 0;
  for (Tensor& t : ts) {
    t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
}

}  // namespace brasa::nn::parallel::detail
