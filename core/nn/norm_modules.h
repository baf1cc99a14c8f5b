#pragma once
// BatchNorm3d, InstanceNorm1d/2d/3d with libtorch's options, F::instance_norm
// with its options, and libtorch's top-level torch::batch_norm /
// torch::instance_norm (at:: argument order).
#include <brasa/nn/modules.h>

#include <optional>

namespace brasa {

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, bool training, double momentum,
                  double eps, bool cudnn_enabled = true);
Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                     const std::optional<Tensor>& running_var, bool use_input_stats,
                     double momentum, double eps, bool cudnn_enabled = true);

namespace nn {

class BatchNorm3dImpl : public Cloneable<BatchNorm3dImpl, BatchNormImpl> {
 public:
  BatchNorm3dImpl(const BatchNormOptions& o) : Cloneable(o, 3, "BatchNorm3d") {}
  BatchNorm3dImpl(int64_t n) : BatchNorm3dImpl(BatchNormOptions(n)) {}
};
BRASA_MODULE(BatchNorm3d);
using BatchNorm3dOptions = BatchNormOptions;

struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  BRASA_ARG(int64_t, num_features);
  BRASA_ARG(double, eps, 1e-5);
  BRASA_ARG(double, momentum, 0.1);
  BRASA_ARG(bool, affine, false);
  BRASA_ARG(bool, track_running_stats, false);
};
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

namespace functional {
struct InstanceNormFuncOptions {
  BRASA_ARG(Tensor, running_mean);
  BRASA_ARG(Tensor, running_var);
  BRASA_ARG(Tensor, weight);
  BRASA_ARG(Tensor, bias);
  BRASA_ARG(bool, use_input_stats, true);
  BRASA_ARG(double, momentum, 0.1);
  BRASA_ARG(double, eps, 1e-5);
};
// Normalizes each (sample, channel) of [N, C, ...] over its other dims. With
// use_input_stats and running stats, these are updated with the batch's
// statistics averaged over N; without use_input_stats, they normalize.
Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options = {});
}  // namespace functional

// The parameters and buffers of BatchNorm (with InstanceNorm's defaults:
// affine and track_running_stats off); inputs [N, C, ...] of dims + 2 dims,
// or unbatched [C, ...] of dims + 1.
class InstanceNormImpl : public BatchNormImpl {
 public:
  InstanceNormImpl(const InstanceNormOptions& o, int64_t dims, std::string name);
  InstanceNormImpl(const InstanceNormImpl& o) = default;
  Tensor forward(const Tensor& x);

 private:
  int64_t dims_;
};
#define BRASA_INSTANCE_NORM(D)                                                                \
  class InstanceNorm##D##dImpl : public Cloneable<InstanceNorm##D##dImpl, InstanceNormImpl> { \
   public:                                                                                    \
    InstanceNorm##D##dImpl(const InstanceNormOptions& o)                                      \
        : Cloneable(o, D, "InstanceNorm" #D "d") {}                                           \
    InstanceNorm##D##dImpl(int64_t n) : InstanceNorm##D##dImpl(InstanceNormOptions(n)) {}     \
  };                                                                                          \
  BRASA_MODULE(InstanceNorm##D##d)
BRASA_INSTANCE_NORM(1);
BRASA_INSTANCE_NORM(2);
BRASA_INSTANCE_NORM(3);
#undef BRASA_INSTANCE_NORM

}  // namespace nn
}  // namespace brasa
