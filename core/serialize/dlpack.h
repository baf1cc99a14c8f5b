#pragma once
// Zero-copy exchange with other libraries through DLPack.
#include <brasa/tensor/tensor.h>
#include <dlpack/dlpack.h>

namespace brasa {

// The returned tensor keeps `t`'s storage alive until its deleter is called.
DLManagedTensor* to_dlpack(const Tensor& t);
// Takes ownership of `src`: its deleter runs when the last tensor using the memory goes away.
Tensor from_dlpack(DLManagedTensor* src);

}  // namespace brasa
