#pragma once
// The dropouts libtorch has beyond Dropout and Dropout2d: Dropout3d (whole
// channels of [N, C, D, H, W]), AlphaDropout and FeatureAlphaDropout (which
// keep a SELU network's mean and variance), as functions with their options,
// as modules, and as libtorch's top-level torch::alpha_dropout /
// torch::feature_alpha_dropout.
#include <brasa/nn/functional.h>
#include <brasa/nn/module.h>
#include <brasa/nn/module_options.h>

#include <ostream>

namespace brasa {

Tensor alpha_dropout(const Tensor& input, double p, bool train);
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train);

namespace nn {

using Dropout3dOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

namespace functional {
using Dropout3dFuncOptions = DropoutFuncOptions;
// The alpha dropouts are off unless training is set, as in libtorch.
struct AlphaDropoutFuncOptions {
  BRASA_ARG(double, p, 0.5);
  BRASA_ARG(bool, training, false);
  BRASA_ARG(bool, inplace, false);
};
using FeatureAlphaDropoutFuncOptions = AlphaDropoutFuncOptions;

// Zeroes whole channels (dim 1) of a 5-D input ([C, D, H, W] unbatched) with probability p.
Tensor dropout3d(const Tensor& x, double p = 0.5, bool training = true);
Tensor dropout3d(const Tensor& x, const Dropout3dFuncOptions& options);
// Dropped elements are set to SELU's negative saturation, then an affine map
// restores the mean and variance.
Tensor alpha_dropout(const Tensor& x, double p = 0.5, bool training = false);
Tensor alpha_dropout(const Tensor& x, const AlphaDropoutFuncOptions& options);
// alpha_dropout over whole channels (dim 1).
Tensor feature_alpha_dropout(const Tensor& x, double p = 0.5, bool training = false);
Tensor feature_alpha_dropout(const Tensor& x, const FeatureAlphaDropoutFuncOptions& options);
}  // namespace functional

// A dropout module: its options' p and inplace, and forward calling `fn`
// with whether the module is training.
#define BRASA_DROPOUT_MODULE(Name, fn)                                                  \
  class Name##Impl : public Cloneable<Name##Impl> {                                     \
   public:                                                                              \
    explicit Name##Impl(const DropoutOptions& o = {}) : Cloneable(#Name), options(o) {} \
    explicit Name##Impl(double p) : Name##Impl(DropoutOptions(p)) {}                    \
    void reset() override {}                                                            \
    Tensor forward(const Tensor& x) {                                                   \
      return functional::fn(x, functional::DropoutFuncOptions()                         \
                                   .p(options.p_)                                       \
                                   .training(is_training())                             \
                                   .inplace(options.inplace_));                         \
    }                                                                                   \
    void pretty_print(std::ostream& os) const override {                                \
      os << "torch::nn::" #Name "(p=" << options.p_                                     \
         << ", inplace=" << (options.inplace_ ? "true" : "false") << ")";               \
    }                                                                                   \
    DropoutOptions options;                                                             \
  };                                                                                    \
  BRASA_MODULE(Name)

namespace functional {
// The module forms' calls: DropoutFuncOptions carries training from the module.
Tensor dropout3d_module(const Tensor& x, const DropoutFuncOptions& o);
Tensor alpha_dropout_module(const Tensor& x, const DropoutFuncOptions& o);
Tensor feature_alpha_dropout_module(const Tensor& x, const DropoutFuncOptions& o);
}  // namespace functional

BRASA_DROPOUT_MODULE(Dropout3d, dropout3d_module);
BRASA_DROPOUT_MODULE(AlphaDropout, alpha_dropout_module);
BRASA_DROPOUT_MODULE(FeatureAlphaDropout, feature_alpha_dropout_module);
#undef BRASA_DROPOUT_MODULE

}  // namespace nn
}  // namespace brasa
