#pragma once
// Pooling modules in 1, 2 and 3 dims with libtorch's options:
//   nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)),
//   nn::AvgPool3d(2), nn::AdaptiveAvgPool2d({7, 7}), nn::AdaptiveMaxPool1d(4).
// The options are the F:: ones (F::MaxPool2dFuncOptions is MaxPool2dOptions).
#include <brasa/nn/functional.h>
#include <brasa/nn/module.h>

#include <ostream>
#include <tuple>

namespace brasa::nn {

template <size_t D>
using MaxPoolOptions = functional::MaxPoolFuncOptions<D>;
template <size_t D>
using AvgPoolOptions = functional::AvgPoolFuncOptions<D>;
template <size_t D>
using AdaptiveAvgPoolOptions = functional::AdaptivePoolFuncOptions<D>;
template <size_t D>
using AdaptiveMaxPoolOptions = functional::AdaptivePoolFuncOptions<D>;
using MaxPool1dOptions = MaxPoolOptions<1>;
using MaxPool2dOptions = MaxPoolOptions<2>;
using MaxPool3dOptions = MaxPoolOptions<3>;
using AvgPool1dOptions = AvgPoolOptions<1>;
using AvgPool2dOptions = AvgPoolOptions<2>;
using AvgPool3dOptions = AvgPoolOptions<3>;
using AdaptiveAvgPool1dOptions = AdaptiveAvgPoolOptions<1>;
using AdaptiveAvgPool2dOptions = AdaptiveAvgPoolOptions<2>;
using AdaptiveAvgPool3dOptions = AdaptiveAvgPoolOptions<3>;
using AdaptiveMaxPool1dOptions = AdaptiveMaxPoolOptions<1>;
using AdaptiveMaxPool2dOptions = AdaptiveMaxPoolOptions<2>;
using AdaptiveMaxPool3dOptions = AdaptiveMaxPoolOptions<3>;
template <size_t D>
using FractionalMaxPoolOptions = functional::FractionalMaxPoolFuncOptions<D>;
using FractionalMaxPool2dOptions = FractionalMaxPoolOptions<2>;
using FractionalMaxPool3dOptions = FractionalMaxPoolOptions<3>;

namespace detail {
// The options as libtorch prints them ("kernel_size=[2, 2], stride=[2, 2], ...").
template <size_t D>
void print_options(std::ostream& os, const functional::MaxPoolFuncOptions<D>& o);
template <size_t D>
void print_options(std::ostream& os, const functional::AvgPoolFuncOptions<D>& o);
template <size_t D>
void print_options(std::ostream& os, const functional::AdaptivePoolFuncOptions<D>& o);
template <size_t D>
void print_options(std::ostream& os, const functional::FractionalMaxPoolFuncOptions<D>& o);
}  // namespace detail

// The shared body of a pooling module: its options and their printing.
template <class Derived, class Options>
class PoolImpl : public Cloneable<Derived> {
 public:
  PoolImpl(const char* name, const Options& o) : Cloneable<Derived>(name), options(o) {}
  void pretty_print(std::ostream& os) const override {
    os << "torch::nn::" << this->name() << "(";
    detail::print_options(os, options);
    os << ")";
  }
  Options options;
};

// Name##Impl takes its options, or what converts to them (a kernel or output size).
#define BRASA_POOL_MODULE(Name, Options, Forward)                               \
  class Name##Impl : public PoolImpl<Name##Impl, Options> {                     \
   public:                                                                      \
    explicit Name##Impl(const Options& o) : PoolImpl(#Name, o) {}               \
    Tensor forward(const Tensor& x) { return functional::Forward(x, options); } \
  };                                                                            \
  BRASA_MODULE(Name)

BRASA_POOL_MODULE(AvgPool1d, AvgPool1dOptions, avg_pool1d);
BRASA_POOL_MODULE(AvgPool2d, AvgPool2dOptions, avg_pool2d);
BRASA_POOL_MODULE(AvgPool3d, AvgPool3dOptions, avg_pool3d);
BRASA_POOL_MODULE(AdaptiveAvgPool1d, AdaptiveAvgPool1dOptions, adaptive_avg_pool1d);
BRASA_POOL_MODULE(AdaptiveAvgPool2d, AdaptiveAvgPool2dOptions, adaptive_avg_pool2d);
BRASA_POOL_MODULE(AdaptiveAvgPool3d, AdaptiveAvgPool3dOptions, adaptive_avg_pool3d);
#undef BRASA_POOL_MODULE

// The max poolings, which can also give the argmax positions (for MaxUnpool).
#define BRASA_MAX_POOL_MODULE(Name, Options, Forward)                           \
  class Name##Impl : public PoolImpl<Name##Impl, Options> {                     \
   public:                                                                      \
    explicit Name##Impl(const Options& o) : PoolImpl(#Name, o) {}               \
    Tensor forward(const Tensor& x) { return functional::Forward(x, options); } \
    std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) {          \
      return functional::Forward##_with_indices(x, options);                    \
    }                                                                           \
  };                                                                            \
  BRASA_MODULE(Name)

BRASA_MAX_POOL_MODULE(MaxPool1d, MaxPool1dOptions, max_pool1d);
BRASA_MAX_POOL_MODULE(MaxPool2d, MaxPool2dOptions, max_pool2d);
BRASA_MAX_POOL_MODULE(MaxPool3d, MaxPool3dOptions, max_pool3d);
BRASA_MAX_POOL_MODULE(AdaptiveMaxPool1d, AdaptiveMaxPool1dOptions, adaptive_max_pool1d);
BRASA_MAX_POOL_MODULE(AdaptiveMaxPool2d, AdaptiveMaxPool2dOptions, adaptive_max_pool2d);
BRASA_MAX_POOL_MODULE(AdaptiveMaxPool3d, AdaptiveMaxPool3dOptions, adaptive_max_pool3d);
BRASA_MAX_POOL_MODULE(FractionalMaxPool2d, FractionalMaxPool2dOptions, fractional_max_pool2d);
BRASA_MAX_POOL_MODULE(FractionalMaxPool3d, FractionalMaxPool3dOptions, fractional_max_pool3d);
#undef BRASA_MAX_POOL_MODULE

}  // namespace brasa::nn
