#pragma once
// Op codes of copies and fills (ops/copy.cpp), shared with the devices'
// kernels (ops/cpu/copy_kernels.cpp).
#include <brasa/tensor/tensor.h>

#include <vector>

namespace brasa {

// dst <- src on one device: src broadcasts to dst's shape, the dtypes may
// differ (converted), any strides, and the two do not overlap unless they
// are the same view.
struct CopyKernel {
  static constexpr const char* name = "copy_";
  using Fn = void (*)(const Tensor& dst, const Tensor& src);
};
struct FillKernel {
  static constexpr const char* name = "fill_";
  using Fn = void (*)(const Tensor& dst, const Scalar& value);
};

// out <- t with the dims where flipped[d] is set reversed (out contiguous, of
// t's shape and dtype).
struct FlipKernel {
  static constexpr const char* name = "flip";
  using Fn = void (*)(const Tensor& out, const Tensor& t, const std::vector<bool>& flipped);
};

}  // namespace brasa
