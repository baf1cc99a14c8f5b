#include <brasa/autograd/grad_mode.h>
#include <brasa/nn/functional.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/random.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/unary.h>

#include <cmath>

namespace brasa::nn::functional {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  BRASA_CHECK(weight.dim() == 2, "linear: expected a 2-D weight [out, in], got shape ", weight.sizes());
  BRASA_CHECK(input.dim() >= 1 && input.size(-1) == weight.size(1), "linear: input of shape ", input.sizes(),
              " does not match the weight's in_features ", weight.size(1), " (weight shape ", weight.sizes(), ")");
  if (input.dim() == 2 && bias.defined()) return addmm(bias, input, weight.t());
  Tensor out = matmul(input, weight.t());
  return bias.defined() ? out + bias : out;
}

Tensor relu(const Tensor& x, bool inplace) {
  if (!inplace) return brasa::relu(x);
  Tensor y = x;
  return y.relu_();
}

Tensor leaky_relu(const Tensor& x, double slope) { return where(x > 0, x, x * slope); }

Tensor gelu(const Tensor& x, const std::string& approximate) {
  if (approximate == "tanh") {
    const double k = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1 + tanh(k * (x + 0.044715 * x * x * x)));
  }
  BRASA_CHECK(approximate == "none", "gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
  return 0.5 * x * (1 + erf(x * M_SQRT1_2));
}

Tensor silu(const Tensor& x) { return x * sigmoid(x); }

Tensor dropout(const Tensor& x, double p, bool training) {
  BRASA_CHECK(p >= 0 && p <= 1, "dropout: probability has to be between 0 and 1, but got ", p);
  if (!training || p == 0) return x;
  if (p == 1) return x * zeros_like(x);
  Tensor mask;
  {
    NoGradGuard ng;
    mask = empty(x.sizes(), x.options());
    mask.bernoulli_(1 - p);
    mask.div_(1 - p);
  }
  return x * mask;
}

Tensor flatten(const Tensor& x, int64_t s, int64_t e) { return brasa::flatten(x, s, e); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return brasa::log_softmax(x, dim); }
Tensor softmax(const Tensor& x, int64_t dim) { return brasa::softmax(x, dim); }

namespace {

Tensor reduce(const Tensor& per_sample, Reduction r) {
  switch (r) {
    case Reduction::None: return per_sample;
    case Reduction::Sum: return per_sample.sum();
    case Reduction::Mean: return per_sample.mean();
  }
  return per_sample;
}

void check_class_target(const char* op, const Tensor& input, const Tensor& target) {
  BRASA_CHECK(input.dim() >= 1, op, ": input must have at least one dimension");
  BRASA_CHECK(target.dtype() == kLong, op, ": expected class-index targets of dtype int64, got ", target.dtype());
  const int64_t batch_dims = input.dim() == 1 ? 0 : 1;
  BRASA_CHECK(target.dim() == input.dim() - 1, op, ": expected target of ", input.dim() - 1,
              " dims for input of shape ", input.sizes(), ", got target of shape ", target.sizes());
  for (int64_t d = 0; d < target.dim(); ++d) {
    int64_t in_d = d < batch_dims ? d : d + 1;
    BRASA_CHECK(target.size(d) == input.size(in_d), op, ": expected target shape to match input ", input.sizes(),
                " without the class dim, got ", target.sizes());
  }
}

}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossOptions& o) {
  check_class_target("nll_loss", input, target);
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t C = input.size(class_dim);
  Tensor valid = target != o.ignore_index_;
  Tensor safe_target = where(valid, target, zeros_like(target));
  {
    Tensor bad = logical_and(valid, logical_or(target < 0, target >= C));
    BRASA_CHECK(!bad.any().item<bool>(), "nll_loss: target ", masked_select(target, bad)[0].item<int64_t>(),
                " is out of bounds for ", C, " classes");
  }
  Tensor picked = input.gather(class_dim, safe_target.unsqueeze(class_dim)).squeeze(class_dim);
  Tensor w = o.weight_.defined() ? o.weight_.index_select(0, safe_target.reshape({-1})).view(target.sizes())
                                 : ones_like(picked);
  w = w * valid.to(w.dtype());
  Tensor per = -(picked * w);
  if (o.reduction_ == Reduction::Mean) return per.sum() / w.sum();
  return reduce(per, o.reduction_);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const NLLLossOptions& o) {
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t C = input.size(class_dim);
  Tensor logp = brasa::log_softmax(input, class_dim);
  const double eps = o.label_smoothing_;
  BRASA_CHECK(eps >= 0 && eps <= 1, "cross_entropy: label_smoothing must be in [0, 1], got ", eps);
  DimVector wshape(input.dim(), 1);
  wshape[class_dim] = C;
  if (target.is_floating_point()) {
    BRASA_CHECK(target.sizes() == input.sizes(), "cross_entropy: probability targets must have the input's shape ",
                input.sizes(), ", got ", target.sizes());
    Tensor t = eps > 0 ? target * (1 - eps) + eps / static_cast<double>(C) : target;
    Tensor terms = logp * t;
    if (o.weight_.defined()) terms = terms * o.weight_.view(wshape);
    return reduce(-terms.sum({class_dim}), o.reduction_);  // mean: over samples, weights aside
  }
  Tensor nll = nll_loss(logp, target, o);
  if (eps == 0) return nll;
  // Smoothing term: the (weighted) mean over classes of -log p.
  Tensor valid = (target != o.ignore_index_).to(logp.dtype());
  Tensor lw = o.weight_.defined() ? logp * o.weight_.view(wshape) : logp;
  Tensor smooth = -lw.sum({class_dim}) * valid;
  Tensor smooth_red;
  if (o.reduction_ == Reduction::Mean) {
    Tensor denom;
    if (o.weight_.defined()) {
      Tensor safe = where(target != o.ignore_index_, target, zeros_like(target));
      denom = (o.weight_.index_select(0, safe.reshape({-1})).view(target.sizes()) * valid).sum();
    } else {
      denom = valid.sum();
    }
    smooth_red = smooth.sum() / denom;
  } else {
    smooth_red = reduce(smooth, o.reduction_);
  }
  return nll * (1 - eps) + smooth_red * (eps / static_cast<double>(C));
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction r) {
  BRASA_CHECK(input.sizes() == target.sizes(), "mse_loss: input ", input.sizes(), " and target ", target.sizes(),
              " must have the same shape");
  Tensor d = input - target;
  return reduce(d * d, r);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction r) {
  BRASA_CHECK(input.sizes() == target.sizes(), "l1_loss: input ", input.sizes(), " and target ", target.sizes(),
              " must have the same shape");
  return reduce(abs(input - target), r);
}

}  // namespace brasa::nn::functional
