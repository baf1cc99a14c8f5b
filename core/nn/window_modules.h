#pragma once
// Layers that work on sliding windows, as libtorch has them: Fold / Unfold
// (patches to columns and back), LPPool1d/2d (the p-norm of each window),
// MaxUnpool1d/2d/3d (max pooling's values put back where their indices
// say) and LocalResponseNorm / CrossMapLRN2d (normalization over
// neighbouring channels); functions with their options, and modules.
#include <brasa/nn/functional.h>
#include <brasa/nn/module.h>
#include <brasa/nn/module_options.h>
#include <brasa/util/libtorch_names.h>

#include <optional>
#include <ostream>
#include <vector>

namespace brasa::nn {

struct UnfoldOptions {
  UnfoldOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  BRASA_ARG(ExpandingArray<2>, kernel_size);
  BRASA_ARG(ExpandingArray<2>, dilation, ExpandingArray<2>(1));
  BRASA_ARG(ExpandingArray<2>, padding, ExpandingArray<2>(0));
  BRASA_ARG(ExpandingArray<2>, stride, ExpandingArray<2>(1));
};
struct FoldOptions {
  FoldOptions(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : output_size_(output_size), kernel_size_(kernel_size) {}
  BRASA_ARG(ExpandingArray<2>, output_size);
  BRASA_ARG(ExpandingArray<2>, kernel_size);
  BRASA_ARG(ExpandingArray<2>, dilation, ExpandingArray<2>(1));
  BRASA_ARG(ExpandingArray<2>, padding, ExpandingArray<2>(0));
  BRASA_ARG(ExpandingArray<2>, stride, ExpandingArray<2>(1));
};

template <size_t D>
struct LPPoolOptions {
  LPPoolOptions(double norm_type, ExpandingArray<D> kernel_size)
      : norm_type_(norm_type), kernel_size_(kernel_size), stride_(kernel_size) {}
  BRASA_ARG(double, norm_type);
  BRASA_ARG(ExpandingArray<D>, kernel_size);
  BRASA_ARG(ExpandingArray<D>, stride);  // the kernel size by default
  BRASA_ARG(bool, ceil_mode, false);
};
using LPPool1dOptions = LPPoolOptions<1>;
using LPPool2dOptions = LPPoolOptions<2>;

template <size_t D>
struct MaxUnpoolOptions {
  MaxUnpoolOptions(ExpandingArray<D> kernel_size)  // NOLINT
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  BRASA_ARG(ExpandingArray<D>, kernel_size);
  BRASA_ARG(ExpandingArray<D>, stride);  // the kernel size by default
  BRASA_ARG(ExpandingArray<D>, padding, ExpandingArray<D>(0));
};
using MaxUnpool1dOptions = MaxUnpoolOptions<1>;
using MaxUnpool2dOptions = MaxUnpoolOptions<2>;
using MaxUnpool3dOptions = MaxUnpoolOptions<3>;

struct LocalResponseNormOptions {
  LocalResponseNormOptions(int64_t size) : size_(size) {}  // NOLINT
  BRASA_ARG(int64_t, size);
  BRASA_ARG(double, alpha, 1e-4);
  BRASA_ARG(double, beta, 0.75);
  BRASA_ARG(double, k, 1.0);
};
using CrossMapLRN2dOptions = LocalResponseNormOptions;

namespace functional {
using UnfoldFuncOptions = UnfoldOptions;
using FoldFuncOptions = FoldOptions;
using LPPool1dFuncOptions = LPPool1dOptions;
using LPPool2dFuncOptions = LPPool2dOptions;
using LocalResponseNormFuncOptions = LocalResponseNormOptions;
// MaxUnpool's options and the output size (the default inverts the pooling).
template <size_t D>
struct MaxUnpoolFuncOptions : MaxUnpoolOptions<D> {
  MaxUnpoolFuncOptions(ExpandingArray<D> kernel_size)  // NOLINT
      : MaxUnpoolOptions<D>(kernel_size) {}
  BRASA_ARG(std::optional<std::vector<int64_t>>, output_size, std::nullopt);
  MaxUnpoolFuncOptions& stride(ExpandingArray<D> s) {
    this->stride_ = s;
    return *this;
  }
  MaxUnpoolFuncOptions& padding(ExpandingArray<D> p) {
    this->padding_ = p;
    return *this;
  }
  // The getters the setters above hide.
  const ExpandingArray<D>& stride() const noexcept { return this->stride_; }
  const ExpandingArray<D>& padding() const noexcept { return this->padding_; }
};
using MaxUnpool1dFuncOptions = MaxUnpoolFuncOptions<1>;
using MaxUnpool2dFuncOptions = MaxUnpoolFuncOptions<2>;
using MaxUnpool3dFuncOptions = MaxUnpoolFuncOptions<3>;

// [N, C, H, W] (or [C, H, W]) -> [N, C * kh * kw, L]: each window's values as a column.
Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options);
// [N, C * kh * kw, L] (or [C * kh * kw, L]) -> [N, C, H, W]: columns summed back into place.
Tensor fold(const Tensor& input, const FoldFuncOptions& options);
Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& options);
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& options);
Tensor max_unpool1d(const Tensor& input, const Tensor& indices,
                    const MaxUnpool1dFuncOptions& options);
Tensor max_unpool2d(const Tensor& input, const Tensor& indices,
                    const MaxUnpool2dFuncOptions& options);
Tensor max_unpool3d(const Tensor& input, const Tensor& indices,
                    const MaxUnpool3dFuncOptions& options);
// x / (k + alpha / size * sum of x^2 over the `size` channels around)^beta.
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options);
}  // namespace functional

// A module applying one of the functions above with its options.
#define BRASA_WINDOW_MODULE(Name, Options, Signature, call)                             \
  class Name##Impl : public Cloneable<Name##Impl> {                                     \
   public:                                                                              \
    template <class... A>                                                               \
    requires std::is_constructible_v<Options, A...>                                     \
    explicit Name##Impl(A&&... a) : Cloneable(#Name), options(std::forward<A>(a)...) {} \
    void reset() override {}                                                            \
    Tensor forward Signature { return call; }                                           \
    void pretty_print(std::ostream& os) const override;                                 \
    Options options;                                                                    \
  };                                                                                    \
  BRASA_MODULE(Name)
BRASA_WINDOW_MODULE(Unfold, UnfoldOptions, (const Tensor& x), functional::unfold(x, options));
BRASA_WINDOW_MODULE(Fold, FoldOptions, (const Tensor& x), functional::fold(x, options));
BRASA_WINDOW_MODULE(LPPool1d, LPPool1dOptions, (const Tensor& x),
                    functional::lp_pool1d(x, options));
BRASA_WINDOW_MODULE(LPPool2d, LPPool2dOptions, (const Tensor& x),
                    functional::lp_pool2d(x, options));
BRASA_WINDOW_MODULE(LocalResponseNorm, LocalResponseNormOptions, (const Tensor& x),
                    functional::local_response_norm(x, options));
BRASA_WINDOW_MODULE(CrossMapLRN2d, CrossMapLRN2dOptions, (const Tensor& x),
                    functional::local_response_norm(x, options));
#define BRASA_UNPOOL_CALL(D)                                                                \
  functional::max_unpool##D##d(x, indices,                                                  \
                               functional::MaxUnpool##D##dFuncOptions(options.kernel_size_) \
                                   .stride(options.stride_)                                 \
                                   .padding(options.padding_)                               \
                                   .output_size(output_size))
BRASA_WINDOW_MODULE(MaxUnpool1d, MaxUnpool1dOptions,
                    (const Tensor& x, const Tensor& indices,
                     const std::optional<std::vector<int64_t>>& output_size = std::nullopt),
                    BRASA_UNPOOL_CALL(1));
BRASA_WINDOW_MODULE(MaxUnpool2d, MaxUnpool2dOptions,
                    (const Tensor& x, const Tensor& indices,
                     const std::optional<std::vector<int64_t>>& output_size = std::nullopt),
                    BRASA_UNPOOL_CALL(2));
BRASA_WINDOW_MODULE(MaxUnpool3d, MaxUnpool3dOptions,
                    (const Tensor& x, const Tensor& indices,
                     const std::optional<std::vector<int64_t>>& output_size = std::nullopt),
                    BRASA_UNPOOL_CALL(3));
#undef BRASA_UNPOOL_CALL
#undef BRASA_WINDOW_MODULE

}  // namespace brasa::nn
