#pragma once
// Op codes of sorting (ops/sort.cpp), shared with the devices' kernels
// (ops/cpu/sort_kernels.cpp).
#include <brasa/tensor/tensor.h>

#include <cstdint>
#include <tuple>

namespace brasa {

// Each of the K rows of `rows` ([K, R] contiguous) sorted (NaN last, or first
// when descending), its first k values and their int64 positions written to
// vals and idx ([K, k] contiguous).
struct SortRowsKernel {
  static constexpr const char* name = "sort";
  using Fn = void (*)(const Tensor& rows, const Tensor& vals, const Tensor& idx, bool descending,
                      bool stable);
};
// The sorted distinct values of a contiguous 1-D tensor, the index of each
// element's value among them (shape of `like`), and each value's count
// (inverse and counts empty when not asked for).
struct UniqueKernel {
  static constexpr const char* name = "unique";
  using Fn = std::tuple<Tensor, Tensor, Tensor> (*)(const Tensor& flat, IntArrayRef like_shape,
                                                    bool return_inverse, bool return_counts);
};

}  // namespace brasa
