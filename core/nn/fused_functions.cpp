// GELU, leaky ReLU, ELU/SELU, SiLU, Mish, hardswish, softplus, layer norm
// and group norm's channel affine: the op side of their fused CPU kernels
// (ops/cpu/activation_kernels.cpp, ops/cpu/normalization_kernels.cpp), with the composites that
// other devices and double backward use.
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/record.h>
#include <brasa/nn/functional.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/activation.h>
#include <brasa/ops/kernels/normalization.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/unary.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

namespace brasa::nn::functional {

// gelu and its derivative as differentiable ops: the other devices' path,
// and the fused kernel's double backward.
static Tensor gelu_composite(const Tensor& x, bool tanh_approximation) {
  if (tanh_approximation) {
    const double k = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1 + tanh(k * (x + 0.044715 * x * x * x)));
  }
  return 0.5 * x * (1 + erf(x * M_SQRT1_2));
}
static Tensor gelu_derivative_composite(const Tensor& x, bool tanh_approximation) {
  if (tanh_approximation) {
    const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
    Tensor t = tanh(k * (x + c * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (k * (1 + 3 * c * x * x));
  }
  return 0.5 * (1 + erf(x * M_SQRT1_2)) + x * exp(-0.5 * x * x) * (0.5 * M_2_SQRTPI * M_SQRT1_2);
}

static const autograd::BackwardName kGeluBackward("GeluBackward0");

Tensor gelu(const Tensor& x, const std::string& approximate) {
  BRASA_CHECK(approximate == "none" || approximate == "tanh",
              "gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
  const bool tanh_approximation = approximate == "tanh";
  const bool fused = (x.dtype() == kFloat || x.dtype() == kDouble) && x.is_cpu() &&
                     has_kernel<GeluKernel>(x.device());
  if (!fused) return gelu_composite(x, tanh_approximation);
  autograd::Recorder r(kGeluBackward, x);
  Tensor y;
  {
    NoGradGuard ng;
    y = kernel<GeluKernel>(x.device())(x.contiguous(), tanh_approximation);
  }
  if (r)
    r.save(x).finish(y, [tanh_approximation](autograd::FormulaNode& n,
                                             const autograd::variable_list& g) {
      Tensor xs = n.saved(0);
      if (is_grad_enabled())  // create_graph: a backward that is itself differentiable
        return autograd::variable_list{g[0] * gelu_derivative_composite(xs, tanh_approximation)};
      return autograd::variable_list{kernel<GeluBackwardKernel>(xs.device())(
          g[0].contiguous(), xs.contiguous(), tanh_approximation)};
    });
  return y;
}

static const autograd::BackwardName kLeakyReluBackward("LeakyReluBackward0");
static const autograd::BackwardName kLeakyReluBackwardBackward("LeakyReluBackwardBackward0");

// grad where x > 0, else grad * slope. Linear in grad: its own gradient is
// the same scaling of the incoming one (and zero for x, as in PyTorch).
static Tensor leaky_relu_backward(const Tensor& grad, const Tensor& x, double slope) {
  autograd::Recorder r(kLeakyReluBackwardBackward, grad);
  brasa::detail::Elementwise e("leaky_relu_backward", grad.dtype());
  e.input(grad).input(x, grad.dtype()).build();
  kernel<LeakyReluBackwardKernel>(e.device())(e, grad.dtype(), slope);
  Tensor out = e.result();
  if (r)
    r.save(x).finish(out, [slope](autograd::FormulaNode& n, const autograd::variable_list& g) {
      return autograd::variable_list{leaky_relu_backward(g[0], n.saved(0), slope)};
    });
  return out;
}

Tensor leaky_relu(const Tensor& x, double slope) {
  const bool fused = isFloatingType(x.dtype()) && has_kernel<LeakyReluKernel>(x.device()) &&
                     has_kernel<LeakyReluBackwardKernel>(x.device());
  if (!fused) return where(x > 0, x, x * slope);
  autograd::Recorder r(kLeakyReluBackward, x);
  brasa::detail::Elementwise e("leaky_relu", x.dtype());
  e.input(x).build();
  kernel<LeakyReluKernel>(e.device())(e, x.dtype(), slope);
  Tensor y = e.result();
  if (r)
    r.save(x).finish(y, [slope](autograd::FormulaNode& n, const autograd::variable_list& g) {
      return autograd::variable_list{leaky_relu_backward(g[0], n.saved(0), slope)};
    });
  return y;
}

// ---- elu, selu, silu, mish, hardswish ----

// f and f' as differentiable ops: the other devices' path and the fused
// kernels' double backward.
static Tensor activation_composite(const Tensor& x, Activation a, const ActivationParams& p) {
  switch (a) {
    case Activation::Elu:
      return where(x > 0, x * p.scale, (exp(x * p.input_scale) - 1) * (p.alpha * p.scale));
    case Activation::Silu:
      return x * sigmoid(x);
    case Activation::Mish:
      return x * tanh(softplus(x));
    case Activation::Hardswish:
      return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);
    case Activation::Softplus: {
      Tensor bx = x * p.beta, above = bx > p.threshold;
      // log1p(exp) of the rest only (it would overflow above the threshold).
      return where(above, x, log1p(exp(where(above, zeros_like(bx), bx))) / p.beta);
    }
  }
  return x;
}
static Tensor activation_derivative_composite(const Tensor& x, Activation a,
                                              const ActivationParams& p) {
  switch (a) {
    case Activation::Elu:
      return where(x > 0, full_like(x, p.scale),
                   exp(x * p.input_scale) * (p.alpha * p.scale * p.input_scale));
    case Activation::Silu: {
      Tensor s = sigmoid(x);
      return s * (1 + x * (1 - s));
    }
    case Activation::Mish: {
      Tensor t = tanh(softplus(x));
      return t + x * sigmoid(x) * (1 - t * t);
    }
    case Activation::Hardswish:
      return where(x < -3, zeros_like(x), where(x <= 3, x / 3.0 + 0.5, ones_like(x)));
    case Activation::Softplus: {
      Tensor bx = x * p.beta;
      return where(bx > p.threshold, ones_like(x), sigmoid(bx));
    }
  }
  return ones_like(x);
}

// One fused pass each way where the device has the kernels.
static Tensor fused_activation(const Tensor& x, Activation a, const ActivationParams& p,
                               const autograd::BackwardName& name) {
  const bool fused = isFloatingType(x.dtype()) && has_kernel<ActivationKernel>(x.device()) &&
                     has_kernel<ActivationBackwardKernel>(x.device());
  if (!fused) return activation_composite(x, a, p);
  autograd::Recorder r(name, x);
  brasa::detail::Elementwise e("activation", x.dtype());
  e.input(x).build();
  kernel<ActivationKernel>(e.device())(e, x.dtype(), a, p);
  Tensor y = e.result();
  if (r)
    r.save(x).finish(y, [a, p](autograd::FormulaNode& n, const autograd::variable_list& g) {
      Tensor xs = n.saved(0);
      if (is_grad_enabled())  // create_graph: a backward that is itself differentiable
        return autograd::variable_list{g[0] * activation_derivative_composite(xs, a, p)};
      brasa::detail::Elementwise b("activation_backward", g[0].dtype());
      b.input(g[0]).input(xs, g[0].dtype()).build();
      kernel<ActivationBackwardKernel>(b.device())(b, g[0].dtype(), a, p);
      return autograd::variable_list{b.result()};
    });
  return y;
}

static const autograd::BackwardName kEluBackward("EluBackward0");
static const autograd::BackwardName kSiluBackward("SiluBackward0");
static const autograd::BackwardName kMishBackward("MishBackward0");
static const autograd::BackwardName kHardswishBackward("HardswishBackward0");
static const autograd::BackwardName kSoftplusBackward("SoftplusBackward0");

Tensor elu(const Tensor& x, double alpha) {
  ActivationParams p;
  p.alpha = alpha;
  return fused_activation(x, Activation::Elu, p, kEluBackward);
}
Tensor selu(const Tensor& x) {
  ActivationParams p;
  p.alpha = 1.6732632423543772848170429916717;
  p.scale = 1.0507009873554804934193349852946;
  return fused_activation(x, Activation::Elu, p, kEluBackward);
}
Tensor silu(const Tensor& x) { return fused_activation(x, Activation::Silu, {}, kSiluBackward); }
Tensor mish(const Tensor& x) { return fused_activation(x, Activation::Mish, {}, kMishBackward); }
Tensor softplus(const Tensor& x, double beta, double threshold) {
  ActivationParams p;
  p.beta = beta;
  p.threshold = threshold;
  return fused_activation(x, Activation::Softplus, p, kSoftplusBackward);
}
// PyTorch's hardswish_backward: 0 below -3, x / 3 + 1/2 on [-3, 3], 1 above.
Tensor hardswish(const Tensor& x) {
  return fused_activation(x, Activation::Hardswish, {}, kHardswishBackward);
}

// Layer norm over the last k dims as differentiable ops.
static Tensor layer_norm_composite(const Tensor& x, int64_t k, const Tensor& weight,
                                   const Tensor& bias, double eps) {
  DimVector dims;
  for (int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  Tensor mean = x.mean(dims, true), var = x.var(dims, false, true);
  Tensor y = (x - mean) * rsqrt(var + eps);
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

static const autograd::BackwardName kNativeLayerNormBackward("NativeLayerNormBackward0");

// t summed over all but its last k dims (t itself when there are none).
static Tensor sum_leading(const Tensor& t, int64_t k) {
  DimVector lead;
  for (int64_t d = 0; d < t.dim() - k; ++d) lead.push_back(d);
  return lead.empty() ? t : t.sum(lead);
}

// One kernel per direction (statistics saved by the forward); a backward with
// create_graph differentiates the composite instead, as batch norm does.
static Tensor fused_layer_norm(const Tensor& input, int64_t k, const Tensor& weight,
                               const Tensor& bias, double eps) {
  autograd::Recorder r(kNativeLayerNormBackward, input, weight, bias);
  int64_t row = 1;
  for (int64_t d = input.dim() - k; d < input.dim(); ++d) row *= input.size(d);
  const Tensor x = input.contiguous();
  Tensor y, mean, rstd;
  {
    NoGradGuard ng;
    std::tie(y, mean, rstd) = kernel<LayerNormKernel>(x.device())(
        x, row, weight.defined() ? weight.contiguous() : Tensor(),
        bias.defined() ? bias.contiguous() : Tensor(), eps);
  }
  if (r) {
    const bool has_bias = bias.defined();
    const std::vector<int64_t> norm_shape(x.sizes().end() - k, x.sizes().end());
    r.save(x, weight, mean, rstd);
    r.finish(y, [k, row, eps, has_bias, norm_shape](autograd::FormulaNode& n,
                                                    const autograd::variable_list& g) {
      Tensor xs = n.saved(0), w = n.saved(1);
      if (is_grad_enabled()) {  // create_graph: differentiate the composite
        // The input gradient as ops of x, w and g (differentiable in all three).
        DimVector dims;
        for (int64_t d = xs.dim() - k; d < xs.dim(); ++d) dims.push_back(d);
        Tensor mean = xs.mean(dims, true), rs = rsqrt(xs.var(dims, false, true) + eps);
        Tensor xhat = (xs - mean) * rs;
        Tensor dxhat = w.defined() ? g[0] * w : g[0];
        Tensor dx = rs * (dxhat - dxhat.mean(dims, true) - xhat * (dxhat * xhat).mean(dims, true));
        Tensor dw = w.defined() ? sum_leading(g[0] * xhat, k) : Tensor();
        Tensor db = has_bias ? sum_leading(g[0], k) : Tensor();
        return autograd::variable_list{n.needs(0) ? dx : Tensor(), n.needs(1) ? dw : Tensor(),
                                       n.needs(2) ? db : Tensor()};
      }
      auto [dx, dw, db] = kernel<LayerNormBackwardKernel>(xs.device())(
          g[0].contiguous(), xs, row, n.saved(2), n.saved(3),
          w.defined() ? w.contiguous() : Tensor());
      if (has_bias && !db.defined()) db = sum_leading(g[0], k);  // no weight: bias alone
      return autograd::variable_list{n.needs(0) ? dx : Tensor(),
                                     n.needs(1) && dw.defined() ? dw.view(norm_shape) : Tensor(),
                                     n.needs(2) && db.defined() ? db.view(norm_shape) : Tensor()};
    });
  }
  return y;
}

Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  BRASA_CHECK(k >= 1 && x.dim() >= k, "layer_norm: normalized_shape ", normalized_shape,
              " does not fit input of shape ", x.sizes());
  for (int64_t i = 0; i < k; ++i)
    BRASA_CHECK(x.size(x.dim() - k + i) == normalized_shape[i], "layer_norm: input shape ",
                x.sizes(), " does not end with normalized_shape ", normalized_shape);
  for (const Tensor& t : {weight, bias})
    if (t.defined())
      BRASA_CHECK(t.sizes() == normalized_shape, "layer_norm: expected weight and bias of shape ",
                  normalized_shape, ", got ", t.sizes());
  const bool fused = x.is_cpu() && (x.dtype() == kFloat || x.dtype() == kDouble) &&
                     (!weight.defined() || weight.dtype() == x.dtype()) &&
                     (!bias.defined() || bias.dtype() == x.dtype()) &&
                     has_kernel<LayerNormKernel>(x.device());
  if (fused) return fused_layer_norm(x, k, weight, bias, eps);
  return layer_norm_composite(x, k, weight, bias, eps);
}

// y = x * weight[c] + bias[c] along dim 1 of x [N, C, ...] (either may be
// undefined), as broadcast ops: group norm's affine where the device has no
// fused group norm.
static Tensor channel_affine(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  DimVector shape(x.dim(), 1);
  shape[1] = x.size(1);
  Tensor y = weight.defined() ? x * weight.view(shape) : x;
  return bias.defined() ? y + bias.view(shape) : y;
}

static const autograd::BackwardName kNativeGroupNormBackward("NativeGroupNormBackward0");

// Group norm's gradients as ops of x, w and g (differentiable in all three),
// for double backward.
static autograd::variable_list group_norm_backward_composite(const Tensor& xs, const Tensor& w,
                                                             const Tensor& g, int64_t G, double eps,
                                                             bool has_bias) {
  const int64_t N = xs.size(0), C = xs.size(1);
  DimVector shape(xs.dim(), 1), all_but_channels;
  shape[1] = C;
  for (int64_t d = 0; d < xs.dim(); ++d)
    if (d != 1) all_but_channels.push_back(d);
  Tensor xg = xs.reshape({N, G, -1});
  Tensor mean = xg.mean({2}, true), rs = rsqrt(xg.var({2}, false, true) + eps);
  Tensor xhat = (xg - mean) * rs;
  Tensor dxhat = (w.defined() ? g * w.view(shape) : g).reshape({N, G, -1});
  Tensor dx = rs * (dxhat - dxhat.mean({2}, true) - xhat * (dxhat * xhat).mean({2}, true));
  Tensor dw = w.defined() ? (g * xhat.view(xs.sizes())).sum(all_but_channels) : Tensor();
  Tensor db = has_bias ? g.sum(all_but_channels) : Tensor();
  return {dx.view(xs.sizes()), dw, db};
}

// One pass each way where the device has the kernels (the statistics per
// sample and group, the channels' affine folded into the same pass).
static Tensor fused_group_norm(const Tensor& input, int64_t G, const Tensor& weight,
                               const Tensor& bias, double eps) {
  autograd::Recorder r(kNativeGroupNormBackward, input, weight, bias);
  const Tensor x = input.contiguous();
  Tensor y, mean, rstd;
  {
    NoGradGuard ng;
    std::tie(y, mean, rstd) =
        kernel<GroupNormKernel>(x.device())(x, G, weight.defined() ? weight.contiguous() : Tensor(),
                                            bias.defined() ? bias.contiguous() : Tensor(), eps);
  }
  if (r) {
    r.save(x, weight, mean, rstd);
    r.finish(y, [G, eps, has_bias = bias.defined()](autograd::FormulaNode& n,
                                                    const autograd::variable_list& g) {
      Tensor xs = n.saved(0), w = n.saved(1);
      autograd::variable_list grads;
      if (is_grad_enabled()) {  // create_graph: differentiate the composite
        grads = group_norm_backward_composite(xs, w, g[0], G, eps, has_bias);
      } else {
        auto [dx, dw, db] = kernel<GroupNormBackwardKernel>(xs.device())(
            g[0].contiguous(), xs, G, n.saved(2), n.saved(3),
            w.defined() ? w.contiguous() : Tensor());
        grads = {dx, dw, has_bias ? db : Tensor()};
      }
      for (size_t i = 0; i < grads.size(); ++i)
        if (!n.needs(i)) grads[i] = Tensor();
      return grads;
    });
  }
  return y;
}

Tensor group_norm(const Tensor& x, int64_t G, const Tensor& weight, const Tensor& bias,
                  double eps) {
  BRASA_CHECK(x.dim() >= 2 && G > 0 && x.size(1) % G == 0,
              "group_norm: expected input [N, C, ...] with C (", x.dim() >= 2 ? x.size(1) : 0,
              ") divisible by num_groups (", G, ")");
  const int64_t N = x.size(0), C = x.size(1);
  BRASA_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == C),
              "group_norm: Expected weight to be a vector of size equal to the number of channels "
              "in input, but got weight of shape ",
              weight.sizes(), " and input of shape ", x.sizes());
  BRASA_CHECK(!bias.defined() || (bias.dim() == 1 && bias.numel() == C),
              "group_norm: Expected bias to be a vector of size equal to the number of channels in "
              "input, but got bias of shape ",
              bias.sizes(), " and input of shape ", x.sizes());
  if (x.numel() == 0) return channel_affine(x, weight, bias);  // an empty batch
  const bool fused =
      (x.dtype() == kFloat || x.dtype() == kDouble) &&
      (!weight.defined() || (weight.dtype() == x.dtype() && weight.device() == x.device())) &&
      (!bias.defined() || (bias.dtype() == x.dtype() && bias.device() == x.device())) &&
      has_kernel<GroupNormKernel>(x.device()) && has_kernel<GroupNormBackwardKernel>(x.device());
  if (fused) return fused_group_norm(x, G, weight, bias, eps);
  // Elsewhere each (sample, group) is normalized as a layer norm of its
  // elements, then the channels' affine.
  Tensor g = x.reshape({N, G, -1});
  Tensor y = layer_norm(g, {g.size(2)}, Tensor(), Tensor(), eps).view(x.sizes());
  return channel_affine(y, weight, bias);
}

}  // namespace brasa::nn::functional
