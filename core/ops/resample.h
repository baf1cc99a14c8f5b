#pragma once
// Separable resampling of a tensor's trailing dims: each resampled dim maps
// every output index to K input indices (taps) with weights. Interpolation
// (nn::functional::interpolate) and average pooling (avg_pool*,
// adaptive_avg_pool*) are this op with different taps. On the CPU (float,
// double) one recorded op runs every dim through a row kernel and its
// backward is the same kernel transposed (scatter-adding the taps), itself
// differentiable; elsewhere each dim is index_select, a multiply and a sum.
#include <brasa/autograd/record.h>
#include <brasa/tensor/tensor.h>

#include <memory>
#include <vector>

namespace brasa::detail {

// For each output index o: input indices index[o * k + j] with weights weight[o * k + j].
struct Taps {
  int64_t out = 0, k = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
};

// The taps of the trailing dims (axes[0] for dim x.dim() - axes.size()) and
// the input sizes they were made for.
struct ResamplePlan {
  std::vector<Taps> axes;
  std::vector<int64_t> in_sizes;
};

// The autograd node names (PyTorch's) of the op and of its backward.
struct ResampleNames {
  const autograd::BackwardName& op;
  const autograd::BackwardName& backward;
};

Tensor resample(const Tensor& x, const std::shared_ptr<const ResamplePlan>& plan,
                const ResampleNames& names);

// Average pooling along one dim: output o averages the window [o * stride -
// padding, + kernel) clipped to the input, divided by its cell count (the
// padding's cells included with count_include_pad, never a ceil_mode
// overhang past the padding), or by `divisor` when it is not 0.
Taps window_average_taps(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding,
                         bool count_include_pad, double divisor = 0);
// Adaptive average pooling along one dim: output o averages
// [floor(o in / out), ceil((o + 1) in / out)).
Taps adaptive_average_taps(int64_t in, int64_t out);

}  // namespace brasa::detail
