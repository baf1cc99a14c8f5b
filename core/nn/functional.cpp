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

Tensor relu6(const Tensor& x) { return hardtanh(x, 0.0, 6.0); }
Tensor elu(const Tensor& x, double alpha) { return where(x > 0, x, (exp(x) - 1) * alpha); }
Tensor selu(const Tensor& x) {
  const double alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946;
  return elu(x, alpha) * scale;
}
Tensor softplus(const Tensor& x, double beta, double threshold) {
  Tensor bx = x * beta;
  // Above the threshold the function is linear (and log1p(exp) would overflow).
  return where(bx > threshold, x, log1p(exp(where(bx > threshold, zeros_like(bx), bx))) / beta);
}
Tensor mish(const Tensor& x) { return x * tanh(softplus(x)); }
Tensor hardtanh(const Tensor& x, double lo, double hi) {
  BRASA_CHECK(lo < hi, "hardtanh: min_val (", lo, ") must be less than max_val (", hi, ")");
  return clamp(x, lo, hi);
}
Tensor dropout2d(const Tensor& x, double p, bool training) {
  BRASA_CHECK(p >= 0 && p <= 1, "dropout2d: probability has to be between 0 and 1, but got ", p);
  BRASA_CHECK(x.dim() == 3 || x.dim() == 4, "dropout2d: expected a 3-D or 4-D input, got shape ", x.sizes());
  if (!training || p == 0) return x;
  DimVector mask_shape(x.sizes().begin(), x.sizes().end());
  for (int64_t d = x.dim() == 4 ? 2 : 1; d < x.dim(); ++d) mask_shape[d] = 1;
  Tensor mask;
  {
    NoGradGuard ng;
    mask = empty(mask_shape, x.options());
    mask.bernoulli_(1 - p);
    if (p < 1) mask.div_(1 - p);
  }
  return x * mask;
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  BRASA_CHECK(x.dim() >= 2, "batch_norm: expected at least a 2-D input [N, C, ...], got shape ", x.sizes());
  const int64_t C = x.size(1);
  DimVector dims{0}, shape(x.dim(), 1);
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  shape[1] = C;
  auto check = [&](const Tensor& t, const char* what) {
    if (t.defined())
      BRASA_CHECK(t.dim() == 1 && t.size(0) == C, "batch_norm: expected ", what, " of shape [", C, "], got ", t.sizes());
  };
  check(running_mean, "running_mean");
  check(running_var, "running_var");
  check(weight, "weight");
  check(bias, "bias");
  Tensor mean, var;
  if (training) {
    const int64_t n = x.numel() / C;
    BRASA_CHECK(n > 1, "batch_norm: expected more than 1 value per channel when training, got input size ", x.sizes());
    mean = x.mean(dims);
    var = x.var(dims, /*unbiased=*/false);
    if (running_mean.defined() && running_var.defined()) {
      NoGradGuard ng;
      Tensor rm = running_mean, rv = running_var;
      rm.mul_(1 - momentum).add_(mean.detach(), momentum);
      rv.mul_(1 - momentum).add_(var.detach() * (static_cast<double>(n) / static_cast<double>(n - 1)), momentum);
    }
  } else {
    BRASA_CHECK(running_mean.defined() && running_var.defined(),
                "batch_norm: running_mean and running_var are needed in eval mode");
    mean = running_mean;
    var = running_var;
  }
  Tensor y = (x - mean.view(shape)) * rsqrt(var.view(shape) + eps);
  if (weight.defined()) y = y * weight.view(shape);
  if (bias.defined()) y = y + bias.view(shape);
  return y;
}

Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  BRASA_CHECK(k >= 1 && x.dim() >= k, "layer_norm: normalized_shape ", normalized_shape,
              " does not fit input of shape ", x.sizes());
  for (int64_t i = 0; i < k; ++i)
    BRASA_CHECK(x.size(x.dim() - k + i) == normalized_shape[i], "layer_norm: input shape ", x.sizes(),
                " does not end with normalized_shape ", normalized_shape);
  DimVector dims;
  for (int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  Tensor mean = x.mean(dims, true), var = x.var(dims, false, true);
  Tensor y = (x - mean) * rsqrt(var + eps);
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

Tensor group_norm(const Tensor& x, int64_t G, const Tensor& weight, const Tensor& bias, double eps) {
  BRASA_CHECK(x.dim() >= 2 && G > 0 && x.size(1) % G == 0, "group_norm: expected input [N, C, ...] with C (",
              x.dim() >= 2 ? x.size(1) : 0, ") divisible by num_groups (", G, ")");
  const int64_t N = x.size(0), C = x.size(1);
  Tensor g = x.reshape({N, G, -1});
  Tensor y = ((g - g.mean({2}, true)) * rsqrt(g.var({2}, false, true) + eps)).view(x.sizes());
  DimVector shape(x.dim(), 1);
  shape[1] = C;
  if (weight.defined()) y = y * weight.view(shape);
  if (bias.defined()) y = y + bias.view(shape);
  return y;
}

Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx) {
  BRASA_CHECK(weight.dim() == 2, "embedding: expected a 2-D weight [num_embeddings, dim], got ", weight.sizes());
  BRASA_CHECK(indices.dtype() == kLong || indices.dtype() == kInt, "embedding: expected int64 or int32 indices, got ",
              indices.dtype());
  Tensor flat = indices.reshape({-1}).to(kLong);
  DimVector shape(indices.sizes().begin(), indices.sizes().end());
  shape.push_back(weight.size(1));
  Tensor rows = weight.index_select(0, flat);
  if (padding_idx) {
    int64_t pad = *padding_idx < 0 ? *padding_idx + weight.size(0) : *padding_idx;
    Tensor is_pad = (flat == pad).unsqueeze(1);
    rows = where(is_pad, rows.detach(), rows);  // the padding row gets no gradient
  }
  return rows.view(shape);
}

Tensor adaptive_avg_pool2d(const Tensor& x, IntArrayRef output_size) {
  BRASA_CHECK(x.dim() == 3 || x.dim() == 4, "adaptive_avg_pool2d: expected a 3-D or 4-D input, got ", x.sizes());
  BRASA_CHECK(output_size.size() == 2 && output_size[0] > 0 && output_size[1] > 0,
              "adaptive_avg_pool2d: output_size must have two positive values, got ", output_size);
  const int64_t H = x.size(-2), W = x.size(-1), OH = output_size[0], OW = output_size[1];
  // Window i covers [floor(i*H/OH), ceil((i+1)*H/OH)).
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < OH; ++i) {
    int64_t h0 = i * H / OH, h1 = ((i + 1) * H + OH - 1) / OH;
    std::vector<Tensor> cols;
    for (int64_t j = 0; j < OW; ++j) {
      int64_t w0 = j * W / OW, w1 = ((j + 1) * W + OW - 1) / OW;
      cols.push_back(x.narrow(-2, h0, h1 - h0).narrow(-1, w0, w1 - w0).mean({-2, -1}));
    }
    rows.push_back(stack(cols, -1));
  }
  return stack(rows, -2);
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
