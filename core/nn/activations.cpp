#include <brasa/autograd/grad_mode.h>
#include <brasa/nn/activations.h>
#include <brasa/nn/functional.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/random.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/unary.h>

namespace brasa::nn::functional {

Tensor softmin(const Tensor& x, const SoftminFuncOptions& o) {
  return brasa::softmax(-(o.dtype_ ? x.to(*o.dtype_) : x), o.dim_);
}

Tensor softsign(const Tensor& x) { return x / (x.abs() + 1); }

Tensor softshrink(const Tensor& x, const SoftshrinkFuncOptions& o) {
  BRASA_CHECK(o.lambda_ >= 0, "softshrink: lambda must be greater or equal to 0, but found to be ",
              o.lambda_, ".");
  return where(x > o.lambda_, x - o.lambda_, where(x < -o.lambda_, x + o.lambda_, Scalar(0.0)));
}

Tensor hardshrink(const Tensor& x, const HardshrinkFuncOptions& o) {
  return where(x.abs() > o.lambda_, x, Scalar(0.0));
}

Tensor tanhshrink(const Tensor& x) { return x - x.tanh(); }

Tensor logsigmoid(const Tensor& x) { return -softplus(-x); }

Tensor celu(const Tensor& x, const CELUFuncOptions& o) {
  BRASA_CHECK(o.alpha_ != 0, "celu: alpha must not be 0 (ZeroDivisionError)");
  return x.clamp_min(0) + ((x / o.alpha_).exp() - 1).mul(o.alpha_).clamp_max(0);
}

Tensor glu(const Tensor& x, const GLUFuncOptions& o) {
  BRASA_CHECK(x.dim() > 0, "glu does not support scalars because halving size must be even");
  const int64_t d = maybe_wrap_dim(o.dim_, x.dim(), "glu");
  BRASA_CHECK(x.size(d) % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ",
              x.size(d));
  const int64_t h = x.size(d) / 2;
  return x.narrow(d, 0, h) * x.narrow(d, h, h).sigmoid();
}

Tensor threshold(const Tensor& x, const ThresholdFuncOptions& o) {
  return where(x > o.threshold_, x, Scalar(o.value_));
}

Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& o) {
  BRASA_CHECK(logits.defined() && logits.is_floating_point(),
              "gumbel_softmax: expected floating logits");
  BRASA_CHECK(o.tau_ > 0, "gumbel_softmax: tau must be positive, got ", o.tau_);
  Tensor gumbels;
  {
    NoGradGuard ng;
    // -log(E) for E ~ Exp(1), i.e. -log(-log(U)); U kept away from 0 and 1.
    Tensor u = empty_like(logits).uniform_(1e-10, 1.0 - 1e-10);
    gumbels = -(-u.log()).log();
  }
  Tensor y_soft = brasa::softmax((logits + gumbels) / o.tau_, o.dim_);
  if (!o.hard_) return y_soft;
  Tensor index = std::get<1>(y_soft.max(o.dim_, true));
  Tensor y_hard = zeros_like(y_soft).scatter(o.dim_, index, 1.0);
  return y_hard - y_soft.detach() + y_soft;
}

Tensor rrelu(const Tensor& x, const RReLUFuncOptions& o) {
  BRASA_CHECK(x.defined() && x.is_floating_point(), "rrelu: expected a floating tensor");
  BRASA_CHECK(o.lower_ <= o.upper_, "rrelu: lower bound (", o.lower_,
              ") must be less than or equal to upper bound (", o.upper_, ")");
  Tensor slope;
  if (o.training_) {
    NoGradGuard ng;
    slope = empty_like(x).uniform_(o.lower_, o.upper_);
  }
  Tensor y =
      o.training_ ? where(x >= 0, x, x * slope) : where(x >= 0, x, x * ((o.lower_ + o.upper_) / 2));
  return detail::apply_inplace(x, y, o.inplace_);
}

}  // namespace brasa::nn::functional

namespace brasa::nn::detail {
void print_options(std::ostream& os, const SoftminOptions& o) { os << "(dim=" << o.dim_ << ")"; }
// libtorch prints the shrinks' lambda without its name.
void print_options(std::ostream& os, const SoftshrinkOptions& o) { os << "(" << o.lambda_ << ")"; }
void print_options(std::ostream& os, const CELUOptions& o) {
  os << "(alpha=" << o.alpha_ << (o.inplace_ ? ", inplace=true" : "") << ")";
}
void print_options(std::ostream& os, const GLUOptions& o) { os << "(dim=" << o.dim_ << ")"; }
void print_options(std::ostream& os, const RReLUOptions& o) {
  os << "(lower=" << o.lower_ << ", upper=" << o.upper_ << (o.inplace_ ? ", inplace=true" : "")
     << ")";
}
Tensor softmax2d(const Tensor& x) {
  BRASA_CHECK(x.dim() == 3 || x.dim() == 4, "Softmax2d: expected input to be 3D or 4D, got ",
              x.dim(), "D instead");
  return brasa::softmax(x, -3);
}
void print_options(std::ostream& os, const ThresholdOptions& o) {
  os << "(threshold=" << o.threshold_ << ", value=" << o.value_
     << (o.inplace_ ? ", inplace=true" : "") << ")";
}
}  // namespace brasa::nn::detail

namespace brasa {
Tensor rrelu(const Tensor& self, double lower, double upper, bool training) {
  return F::rrelu(self, F::RReLUFuncOptions().lower(lower).upper(upper).training(training));
}
}  // namespace brasa
