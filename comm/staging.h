#pragma once
// Buffers the backends hand to their libraries: contiguous tensors, and lists
// packed into one flat tensor. Internal to brasa_comm.

#include <brasa/ops/shape.h>
#include <brasa/tensor/tensor.h>

#include <vector>

namespace brasa::distributed::detail {

// A contiguous tensor the library can read or write for `t` (t itself when
// it is contiguous already).
inline Tensor staged(const Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

// Puts the result written into `buf` back into `t` when `buf` is a copy.
inline void unstage(const Tensor& t, const Tensor& buf) {
  if (!t.is_contiguous()) const_cast<Tensor&>(t).copy_(buf);
}

// The tensors one after the other, flattened.
inline Tensor flat_cat(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> flat;
  flat.reserve(tensors.size());
  for (const auto& t : tensors) flat.push_back(t.reshape({-1}));
  return cat(flat, 0);
}

// The inverse of flat_cat: copies consecutive pieces of `flat` into `targets`.
inline void scatter_back(const std::vector<Tensor>& targets, const Tensor& flat) {
  int64_t off = 0;
  for (const auto& t : targets) {
    const_cast<Tensor&>(t).copy_(flat.narrow(0, off, t.numel()).reshape(t.sizes()));
    off += t.numel();
  }
}

}  // namespace brasa::distributed::detail
