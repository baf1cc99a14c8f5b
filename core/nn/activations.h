#pragma once
// More activations, as functions (F::softmin, F::softshrink, ...) and
// modules with their options (torch::nn::Softmin, SoftshrinkOptions, ...),
// composed of differentiable ops.
#include <brasa/nn/module.h>
#include <brasa/nn/module_options.h>
#include <brasa/tensor/tensor.h>

#include <optional>
#include <ostream>
#include <type_traits>
#include <utility>

namespace brasa {
// libtorch's torch::rrelu (at:: arguments; the slopes come from the default generator).
Tensor rrelu(const Tensor& self, double lower = 1.0 / 8.0, double upper = 1.0 / 3.0,
             bool training = false);
}  // namespace brasa

namespace brasa::nn {

struct SoftminOptions {
  SoftminOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as libtorch's
  BRASA_ARG(int64_t, dim);
};
struct SoftshrinkOptions {
  SoftshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  BRASA_ARG(double, lambda);
};
using HardshrinkOptions = SoftshrinkOptions;
struct CELUOptions {
  BRASA_ARG(double, alpha, 1.0);
  BRASA_ARG(bool, inplace, false);
};
struct GLUOptions {
  GLUOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT
  BRASA_ARG(int64_t, dim);
};
struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  BRASA_ARG(double, threshold);
  BRASA_ARG(double, value);
  BRASA_ARG(bool, inplace, false);
};

struct RReLUOptions {
  BRASA_ARG(double, lower, 1.0 / 8.0);
  BRASA_ARG(double, upper, 1.0 / 3.0);
  BRASA_ARG(bool, inplace, false);
};

namespace functional {
struct RReLUFuncOptions {
  BRASA_ARG(double, lower, 1.0 / 8.0);
  BRASA_ARG(double, upper, 1.0 / 3.0);
  BRASA_ARG(bool, training, false);
  BRASA_ARG(bool, inplace, false);
};
struct GumbelSoftmaxFuncOptions {
  BRASA_ARG(double, tau, 1.0);
  BRASA_ARG(bool, hard, false);
  BRASA_ARG(int64_t, dim, -1);
};
// softmax((logits + Gumbel noise) / tau) along dim; with hard, the one-hot
// of its argmax in the forward and the soft sample's gradient (straight through).
Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options = {});
// x above 0; below, x times a slope drawn uniformly from [lower, upper] per
// element when training, (lower + upper) / 2 otherwise.
Tensor rrelu(const Tensor& x, const RReLUFuncOptions& options = {});
struct SoftminFuncOptions {
  SoftminFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as libtorch's
  BRASA_ARG(int64_t, dim);
  // The input is cast to this dtype first.
  BRASA_ARG(std::optional<ScalarType>, dtype, std::nullopt);
};
using SoftshrinkFuncOptions = SoftshrinkOptions;
using HardshrinkFuncOptions = HardshrinkOptions;
using CELUFuncOptions = CELUOptions;
using GLUFuncOptions = GLUOptions;
using ThresholdFuncOptions = ThresholdOptions;

// softmax(-x, dim)
Tensor softmin(const Tensor& x, const SoftminFuncOptions& options);
// x / (1 + |x|)
Tensor softsign(const Tensor& x);
// x - lambda above lambda, x + lambda below -lambda, 0 between.
Tensor softshrink(const Tensor& x, const SoftshrinkFuncOptions& options = {});
// x where |x| > lambda, else 0.
Tensor hardshrink(const Tensor& x, const HardshrinkFuncOptions& options = {});
// x - tanh(x)
Tensor tanhshrink(const Tensor& x);
// log(sigmoid(x)), computed as -softplus(-x).
Tensor logsigmoid(const Tensor& x);
// max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
Tensor celu(const Tensor& x, const CELUFuncOptions& options = {});
// a * sigmoid(b) for the two halves a, b of x along dim.
Tensor glu(const Tensor& x, const GLUFuncOptions& options = {});
// x above threshold, else value.
Tensor threshold(const Tensor& x, const ThresholdFuncOptions& options);
}  // namespace functional

namespace detail {
void print_options(std::ostream& os, const SoftminOptions& o);
void print_options(std::ostream& os, const SoftshrinkOptions& o);
void print_options(std::ostream& os, const CELUOptions& o);
void print_options(std::ostream& os, const GLUOptions& o);
void print_options(std::ostream& os, const ThresholdOptions& o);
void print_options(std::ostream& os, const RReLUOptions& o);
// Softmax over the channels (dim -3) of [N, C, H, W] or [C, H, W].
Tensor softmax2d(const Tensor& x);
}  // namespace detail

// An activation module: options, and forward applying its function.
#define BRASA_ACTIVATION_MODULE(Name, Options, call)                                         \
  class Name##Impl : public Cloneable<Name##Impl> {                                          \
   public:                                                                                   \
    /* whatever builds the options: Options, its arguments, or none when it has a default */ \
    template <class... A>                                                                    \
    requires std::is_constructible_v<Options, A...>                                          \
    explicit Name##Impl(A&&... a) : Cloneable(#Name), options(std::forward<A>(a)...) {}      \
    void reset() override {}                                                                 \
    Tensor forward(const Tensor& x) { return call; }                                         \
    void pretty_print(std::ostream& os) const override {                                     \
      detail::print_options(os << "torch::nn::" #Name, options);                             \
    }                                                                                        \
    Options options;                                                                         \
  };                                                                                         \
  BRASA_MODULE(Name)

struct NoOptions {};
BRASA_ACTIVATION_MODULE(Softmin, SoftminOptions, functional::softmin(x, options.dim_));
BRASA_ACTIVATION_MODULE(Softshrink, SoftshrinkOptions, functional::softshrink(x, options));
BRASA_ACTIVATION_MODULE(Hardshrink, HardshrinkOptions, functional::hardshrink(x, options));
BRASA_ACTIVATION_MODULE(CELU, CELUOptions, functional::celu(x, options));
BRASA_ACTIVATION_MODULE(GLU, GLUOptions, functional::glu(x, options));
BRASA_ACTIVATION_MODULE(Threshold, ThresholdOptions, functional::threshold(x, options));
BRASA_ACTIVATION_MODULE(Softsign, NoOptions, functional::softsign(x));
BRASA_ACTIVATION_MODULE(Tanhshrink, NoOptions, functional::tanhshrink(x));
BRASA_ACTIVATION_MODULE(LogSigmoid, NoOptions, functional::logsigmoid(x));
BRASA_ACTIVATION_MODULE(Softmax2d, NoOptions, detail::softmax2d(x));
BRASA_ACTIVATION_MODULE(RReLU, RReLUOptions,
                        functional::rrelu(x, functional::RReLUFuncOptions()
                                                 .lower(options.lower_)
                                                 .upper(options.upper_)
                                                 .training(is_training())
                                                 .inplace(options.inplace_)));
#undef BRASA_ACTIVATION_MODULE

}  // namespace brasa::nn
