#include <brasa/autograd/record.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/activation.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/nn/activations.h>
#include <brasa/nn/aten_functions.h>
#include <brasa/nn/image_modules.h>
#include <brasa/nn/loss_modules.h>
#include <brasa/nn/window_modules.h>
#include <brasa/ops/conv.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/split_combine.h>
#include <brasa/ops/binary.h>

namespace brasa {

namespace F = nn::functional;

ReductionArg::ReductionArg(int64_t r) {
  BRASA_CHECK(r >= 0 && r <= 2, "reduction: expected 0 (None), 1 (Mean) or 2 (Sum), got ", r);
  value = r == 0 ? Reduction::None : r == 1 ? Reduction::Mean : Reduction::Sum;
}

namespace {
Tensor or_undefined(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }
}  // namespace

Tensor dropout(const Tensor& input, double p, bool train) { return F::dropout(input, p, train); }

Tensor feature_dropout(const Tensor& input, double p, bool train) {
  return F::dropout2d(input, p, train);
}

Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                ReductionArg reduction, int64_t ignore_index) {
  return F::nll_loss(self, target,
                     F::NLLLossOptions()
                         .weight(or_undefined(weight))
                         .reduction(reduction.value)
                         .ignore_index(ignore_index));
}

Tensor cross_entropy_loss(const Tensor& self, const Tensor& target,
                          const std::optional<Tensor>& weight, ReductionArg reduction,
                          int64_t ignore_index, double label_smoothing) {
  return F::cross_entropy(self, target,
                          F::NLLLossOptions()
                              .weight(or_undefined(weight))
                              .reduction(reduction.value)
                              .ignore_index(ignore_index)
                              .label_smoothing(label_smoothing));
}

Tensor mse_loss(const Tensor& self, const Tensor& target, ReductionArg reduction) {
  return F::mse_loss(self, target, reduction.value);
}

Tensor l1_loss(const Tensor& self, const Tensor& target, ReductionArg reduction) {
  return F::l1_loss(self, target, reduction.value);
}

Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, ReductionArg reduction,
                      double beta) {
  return F::smooth_l1_loss(self, target, reduction.value, beta);
}

Tensor huber_loss(const Tensor& self, const Tensor& target, ReductionArg reduction, double delta) {
  return F::huber_loss(self, target, reduction.value, delta);
}

Tensor binary_cross_entropy(const Tensor& self, const Tensor& target,
                            const std::optional<Tensor>& weight, ReductionArg reduction) {
  return F::binary_cross_entropy(self, target, or_undefined(weight), reduction.value);
}

Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target,
                                        const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight,
                                        ReductionArg reduction) {
  return F::binary_cross_entropy_with_logits(self, target, or_undefined(weight),
                                             or_undefined(pos_weight), reduction.value);
}

Tensor kl_div(const Tensor& self, const Tensor& target, ReductionArg reduction, bool log_target) {
  return F::kl_div(self, target, reduction.value, log_target);
}

Tensor gelu(const Tensor& self, const std::string& approximate) {
  return F::gelu(self, approximate);
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps, bool) {
  return F::layer_norm(input, normalized_shape, or_undefined(weight), or_undefined(bias), eps);
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool) {
  return F::group_norm(input, num_groups, or_undefined(weight), or_undefined(bias), eps);
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse) {
  BRASA_CHECK(!sparse, "embedding: sparse gradients are not supported (sparse=true)");
  // at::embedding: -1 means no padding row (negative rows are normalized by its callers).
  std::optional<int64_t> pad;
  if (padding_idx != -1) pad = padding_idx;
  return F::embedding(indices, weight, pad, std::nullopt, 2.0, scale_grad_by_freq);
}

Tensor pad(const Tensor& self, IntArrayRef pad, const std::string& mode,
           std::optional<double> value) {
  F::PadFuncOptions o(pad.vec());
  if (mode == "constant")
    o.mode(kConstant).value(value.value_or(0.0));
  else if (mode == "reflect")
    o.mode(kReflect);
  else if (mode == "replicate")
    o.mode(kReplicate);
  else if (mode == "circular")
    o.mode(kCircular);
  else
    BRASA_ERROR("pad: unknown mode '", mode,
                "' (expected 'constant', 'reflect', 'replicate' or 'circular')");
  BRASA_CHECK(mode == "constant" || !value, "pad: padding mode \"", mode,
              "\" doesn't take in value argument");
  return F::pad(self, o);
}

Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, double value) {
  return F::pad(self, pad, value);
}

Tensor threshold(const Tensor& self, double threshold, double value) {
  return F::threshold(self, F::ThresholdFuncOptions(threshold, value));
}

Tensor hardtanh(const Tensor& self, double min_val, double max_val) {
  return F::hardtanh(self, min_val, max_val);
}

Tensor leaky_relu(const Tensor& self, double negative_slope) {
  return F::leaky_relu(self, negative_slope);
}
Tensor elu(const Tensor& self, double alpha) { return F::elu(self, alpha); }
Tensor selu(const Tensor& self) { return F::selu(self); }
Tensor silu(const Tensor& self) { return F::silu(self); }
Tensor mish(const Tensor& self) { return F::mish(self); }
Tensor hardsigmoid(const Tensor& self) { return F::hardsigmoid(self); }
Tensor hardswish(const Tensor& self) { return F::hardswish(self); }
Tensor softplus(const Tensor& self, double beta, double threshold) {
  return F::softplus(self, beta, threshold);
}
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  return F::cosine_similarity(x1, x2, dim, eps);
}

Tensor celu(const Tensor& self, double alpha) {
  return F::celu(self, F::CELUFuncOptions().alpha(alpha));
}
Tensor hardshrink(const Tensor& self, double lambd) {
  return F::hardshrink(self, F::HardshrinkFuncOptions(lambd));
}
Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor) {
  return F::pixel_shuffle(self, upscale_factor);
}
Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor) {
  return F::pixel_unshuffle(self, downscale_factor);
}
Tensor channel_shuffle(const Tensor& self, int64_t groups) {
  BRASA_CHECK(self.defined() && self.dim() >= 3,
              "channel_shuffle: expected an input [N, C, ...] of at least 3 dims, got shape ",
              self.defined() ? self.sizes() : IntArrayRef{});
  BRASA_CHECK(groups > 0, "Number of groups to divide channels in must be positive.",
              " Value of groups:", groups);
  const int64_t C = self.size(1);
  BRASA_CHECK(C % groups == 0, "Number of channels must be divisible by groups. Got ", C,
              " channels and ", groups, " groups.");
  std::vector<int64_t> split(self.sizes().begin(), self.sizes().end());
  split[1] = C / groups;
  split.insert(split.begin() + 1, groups);
  // [N, g, C/g, ...] -> [N, C/g, g, ...] -> [N, C, ...]
  return self.reshape(split).transpose(1, 2).reshape(self.sizes());
}
Tensor prelu(const Tensor& self, const Tensor& weight) { return F::prelu(self, weight); }
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const std::optional<Tensor>& bias) {
  return F::bilinear(input1, input2, weight, or_undefined(bias));
}
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin, ReductionArg reduction) {
  return F::margin_ranking_loss(
      input1, input2, target,
      F::MarginRankingLossFuncOptions().margin(margin).reduction(reduction.value));
}
Tensor hinge_embedding_loss(const Tensor& self, const Tensor& target, double margin,
                            ReductionArg reduction) {
  return F::hinge_embedding_loss(
      self, target, F::HingeEmbeddingLossFuncOptions().margin(margin).reduction(reduction.value));
}
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin, ReductionArg reduction) {
  return F::cosine_embedding_loss(
      input1, input2, target,
      F::CosineEmbeddingLossFuncOptions().margin(margin).reduction(reduction.value));
}
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap, ReductionArg reduction) {
  return F::triplet_margin_loss(
      anchor, positive, negative,
      F::TripletMarginLossFuncOptions().margin(margin).p(p).eps(eps).swap(swap).reduction(
          reduction.value));
}
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, ReductionArg reduction) {
  return F::poisson_nll_loss(
      input, target,
      F::PoissonNLLLossFuncOptions().log_input(log_input).full(full).eps(eps).reduction(
          reduction.value));
}
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  return F::pairwise_distance(x1, x2,
                              F::PairwiseDistanceFuncOptions().p(p).eps(eps).keepdim(keepdim));
}
Tensor pdist(const Tensor& self, double p) { return F::pdist(self, p); }
Tensor adaptive_avg_pool1d(const Tensor& self, IntArrayRef output_size) {
  return F::adaptive_avg_pool1d(self, output_size.vec());
}
Tensor avg_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad) {
  F::AvgPool1dFuncOptions o(kernel_size.vec());
  if (!stride.empty()) o.stride(stride.vec());
  return F::avg_pool1d(
      self, o.padding(padding.vec()).ceil_mode(ceil_mode).count_include_pad(count_include_pad));
}
namespace {
template <size_t D>
F::MaxPoolFuncOptions<D> max_pool_options(IntArrayRef kernel_size, IntArrayRef stride,
                                          IntArrayRef padding, IntArrayRef dilation,
                                          bool ceil_mode) {
  F::MaxPoolFuncOptions<D> o(kernel_size.vec());
  if (!stride.empty()) o.stride(stride.vec());
  return o.padding(padding.vec()).dilation(dilation.vec()).ceil_mode(ceil_mode);
}
}  // namespace
Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return F::max_pool1d(self,
                       max_pool_options<1>(kernel_size, stride, padding, dilation, ceil_mode));
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  return F::max_pool1d_with_indices(
      self, max_pool_options<1>(kernel_size, stride, padding, dilation, ceil_mode));
}
Tensor max_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return F::max_pool3d(self,
                       max_pool_options<3>(kernel_size, stride, padding, dilation, ceil_mode));
}

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  return F::max_pool3d_with_indices(
      self, max_pool_options<3>(kernel_size, stride, padding, dilation, ceil_mode));
}
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& self, IntArrayRef output_size) {
  return F::adaptive_max_pool1d_with_indices(self, output_size.vec());
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntArrayRef output_size) {
  return F::adaptive_max_pool2d_with_indices(self, output_size.vec());
}
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& self, IntArrayRef output_size) {
  return F::adaptive_max_pool3d_with_indices(self, output_size.vec());
}
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  return F::adaptive_avg_pool2d(self, output_size.vec());
}
Tensor adaptive_avg_pool3d(const Tensor& self, IntArrayRef output_size) {
  return F::adaptive_avg_pool3d(self, output_size.vec());
}
Tensor avg_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  F::AvgPool3dFuncOptions o(kernel_size.vec());
  if (!stride.empty()) o.stride(stride.vec());
  o.padding(padding.vec()).ceil_mode(ceil_mode).count_include_pad(count_include_pad);
  if (divisor_override) o.divisor_override(*divisor_override);
  return F::avg_pool3d(self, o);
}
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  return F::linear(input, weight, or_undefined(bias));
}
Tensor one_hot(const Tensor& self, int64_t num_classes) { return F::one_hot(self, num_classes); }
Tensor relu6(const Tensor& self) { return F::relu6(self); }
Tensor log_sigmoid(const Tensor& self) { return F::logsigmoid(self); }
Tensor glu(const Tensor& self, int64_t dim) { return F::glu(self, F::GLUFuncOptions(dim)); }
Tensor softshrink(const Tensor& self, const Scalar& lambd) {
  return F::softshrink(self, F::SoftshrinkFuncOptions(lambd.toDouble()));
}
namespace {
// F::pad in `mode` after checking that padding covers `dims` dims (as the ATen ops do).
Tensor pad_last_dims(const char* op, const Tensor& self, IntArrayRef padding, int64_t dims,
                     PaddingMode mode) {
  BRASA_CHECK(static_cast<int64_t>(padding.size()) == 2 * dims, op,
              ": padding size is expected to be ", 2 * dims, ", but got: ", padding.size());
  return F::pad(self, F::PadFuncOptions(padding.vec()).mode(mode));
}
}  // namespace
Tensor reflection_pad1d(const Tensor& self, IntArrayRef padding) {
  return pad_last_dims("reflection_pad1d", self, padding, 1, kReflect);
}
Tensor reflection_pad2d(const Tensor& self, IntArrayRef padding) {
  return pad_last_dims("reflection_pad2d", self, padding, 2, kReflect);
}
Tensor reflection_pad3d(const Tensor& self, IntArrayRef padding) {
  return pad_last_dims("reflection_pad3d", self, padding, 3, kReflect);
}
Tensor replication_pad1d(const Tensor& self, IntArrayRef padding) {
  return pad_last_dims("replication_pad1d", self, padding, 1, kReplicate);
}
Tensor replication_pad2d(const Tensor& self, IntArrayRef padding) {
  return pad_last_dims("replication_pad2d", self, padding, 2, kReplicate);
}
Tensor replication_pad3d(const Tensor& self, IntArrayRef padding) {
  return pad_last_dims("replication_pad3d", self, padding, 3, kReplicate);
}
Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  return F::unfold(self, F::UnfoldFuncOptions(kernel_size.vec())
                             .dilation(dilation.vec())
                             .padding(padding.vec())
                             .stride(stride.vec()));
}
Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  return F::fold(self, F::FoldFuncOptions(output_size.vec(), kernel_size.vec())
                           .dilation(dilation.vec())
                           .padding(padding.vec())
                           .stride(stride.vec()));
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq,
    int64_t mode, bool sparse, const std::optional<Tensor>& per_sample_weights,
    bool include_last_offset, std::optional<int64_t> padding_idx) {
  BRASA_CHECK(mode >= 0 && mode <= 2, "embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), ",
              "got ", mode);
  BRASA_CHECK(!sparse, "embedding_bag: sparse gradients are not supported (sparse=true)");
  const EmbeddingBagMode m = mode == 0   ? EmbeddingBagMode::Sum
                             : mode == 1 ? EmbeddingBagMode::Mean
                                         : EmbeddingBagMode::Max;
  Tensor output =
      F::embedding_bag(indices, weight, offsets, m, or_undefined(per_sample_weights),
                       include_last_offset, padding_idx, std::nullopt, 2.0, scale_grad_by_freq);
  // The bookkeeping outputs, from the indices and bag starts on the host.
  Tensor flat = indices.reshape({-1}).to(Device(kCPU), kLong).contiguous();
  const int64_t total = flat.numel(), bags = output.size(0);
  std::vector<int64_t> starts;
  if (indices.dim() == 2) {
    for (int64_t b = 0; b < indices.size(0); ++b) starts.push_back(b * indices.size(1));
  } else {
    Tensor o = offsets.to(Device(kCPU), kLong).contiguous();
    starts.assign(o.data_ptr<int64_t>(), o.data_ptr<int64_t>() + bags);
  }
  starts.push_back(total);
  const int64_t* idx = flat.data_ptr<int64_t>();
  // The padding row as a row index (F::embedding_bag has checked its range).
  const int64_t pad = F::detail::wrap_padding_idx("embedding_bag", padding_idx, weight.size(0));
  std::vector<int64_t> offset2bag(total), bag_size(bags);
  for (int64_t b = 0; b < bags; ++b)
    for (int64_t i = starts[b]; i < starts[b + 1]; ++i) {
      offset2bag[i] = b;
      if (idx[i] != pad) ++bag_size[b];
    }
  const TensorOptions longs = TensorOptions().dtype(kLong);
  Tensor sizes = tensor(bag_size, longs);
  Tensor max_indices = sizes;
  if (mode == 2) {
    const int64_t dims = weight.size(1);
    Tensor w = weight.detach().to(Device(kCPU), kDouble).contiguous();
    std::vector<int64_t> chosen(bags * dims, 0);
    for (int64_t b = 0; b < bags; ++b)
      for (int64_t d = 0; d < dims; ++d) {
        bool first = true;
        double best = 0;
        for (int64_t i = starts[b]; i < starts[b + 1]; ++i) {
          if (idx[i] == pad) continue;
          const double v = w.data_ptr<double>()[idx[i] * dims + d];
          if (first || v > best) chosen[b * dims + d] = idx[i], best = v, first = false;
        }
      }
    max_indices = tensor(chosen, longs).view({bags, dims});
  }
  const Device device = output.device();
  return {output, tensor(offset2bag, longs).to(device), sizes.to(device), max_indices.to(device)};
}

Tensor conv_tbc(const Tensor& self, const Tensor& weight, const Tensor& bias, int64_t pad) {
  BRASA_CHECK(self.defined() && self.dim() == 3,
              "conv_tbc: Input must have 3 dims: time, batch, in_channel");
  BRASA_CHECK(weight.defined() && weight.dim() == 3,
              "conv_tbc: Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.");
  BRASA_CHECK(bias.defined() && bias.dim() == 1, "conv_tbc: Bias must be 1-D");
  BRASA_CHECK(self.size(2) == weight.size(1),
              "conv_tbc: Input dim 2 (input channels) is not == dim 1 in the weight tensor");
  BRASA_CHECK(weight.size(2) == bias.size(0),
              "conv_tbc: Bias size must equal dim 2 in the weight tensor (output channels).");
  // [T, B, C] -> [B, C, T]; weight [k, in, out] -> [out, in, k].
  Tensor y = conv1d(self.permute({1, 2, 0}), weight.permute({2, 1, 0}), bias, {1}, {pad});
  return y.permute({2, 0, 1});
}

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups) {
  BRASA_CHECK(weight.defined() && weight.dim() >= 3 && weight.dim() <= 5,
              "convolution: expected a weight of 3, 4 or 5 dims, got shape ",
              weight.defined() ? weight.sizes() : IntArrayRef{});
  const Tensor b = or_undefined(bias);
  const int64_t spatial = weight.dim() - 2;
  if (transposed) {
    BRASA_CHECK(spatial <= 2, "convolution: transposed convolutions of ", spatial,
                " spatial dims are not supported (1 or 2)");
    return spatial == 1 ? conv_transpose1d(input, weight, b, stride, padding, output_padding,
                                           groups, dilation)
                        : conv_transpose2d(input, weight, b, stride, padding, output_padding,
                                           groups, dilation);
  }
  if (spatial == 1) return conv1d(input, weight, b, stride, padding, dilation, groups);
  if (spatial == 2) return conv2d(input, weight, b, stride, padding, dilation, groups);
  return conv3d(input, weight, b, stride, padding, dilation, groups);
}

namespace nn::functional {

static const autograd::BackwardName kPreluBackward("PreluKernelBackward0");

// The composite (other devices and dtypes, and double backward): the slope
// broadcast along dim 1.
static Tensor prelu_composite(const Tensor& x, const Tensor& a) { return where(x > 0, x, x * a); }

Tensor prelu(const Tensor& x, const Tensor& weight) {
  BRASA_CHECK(x.defined() && weight.defined(), "prelu: expected defined input and weight");
  Tensor a = weight;
  const int64_t C = weight.numel();
  if (C > 1) {
    BRASA_CHECK(x.dim() >= 2 && x.size(1) == C, "prelu: ", C,
                " parameters need an input with that many channels (dim 1), got shape ", x.sizes());
    DimVector shape(x.dim(), 1);
    shape[1] = C;
    a = weight.reshape(shape);
  }
  const bool fused = (x.dtype() == kFloat || x.dtype() == kDouble) && weight.dtype() == x.dtype() &&
                     x.is_cpu() && weight.is_cpu() && C >= 1 && has_kernel<PreluKernel>(x.device());
  if (!fused) return prelu_composite(x, a);
  // [N, C, S]: with one slope, any split of the elements into rows.
  const int64_t N =
      C > 1 ? x.size(0) : (x.dim() == 0 ? 1 : x.numel() / std::max<int64_t>(x.size(-1), 1));
  const int64_t S = x.numel() == 0 ? 0 : x.numel() / (N * C);
  autograd::Recorder r(kPreluBackward, x, weight);
  Tensor y = empty(x.sizes(), x.options());
  Tensor xc = x.contiguous(), wc = weight.contiguous();
  if (x.numel() > 0) {
    NoGradGuard no_grad;
    kernel<PreluKernel>(x.device())(xc, wc, y, N, C, S);
  }
  if (r)
    r.save(xc, wc).finish(y, [N, C, S, shape = a.sizes().vec()](autograd::FormulaNode& n,
                                                                const autograd::variable_list& g) {
      Tensor xs = n.saved(0), ws = n.saved(1);
      if (is_grad_enabled()) {  // create_graph: a differentiable backward
        Tensor as = ws.reshape(shape), positive = xs > 0;
        Tensor gx = where(positive, g[0], g[0] * as);
        Tensor gw = where(positive, zeros_like(xs), g[0] * xs);
        gw = C > 1 ? gw.transpose(0, 1).reshape({C, -1}).sum({1}) : gw.sum().reshape(ws.sizes());
        return autograd::variable_list{gx, gw.reshape(ws.sizes())};
      }
      Tensor gx = empty(xs.sizes(), xs.options()), gw = empty(ws.sizes(), ws.options());
      if (xs.numel() > 0)
        kernel<PreluBackwardKernel>(xs.device())(g[0].contiguous(), xs, ws, gx, gw, N, C, S);
      else
        gw.zero_();
      return autograd::variable_list{gx, gw};
    });
  return y;
}

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias) {
  BRASA_CHECK(input1.defined() && input2.defined() && weight.defined() && weight.dim() == 3,
              "bilinear: expected defined inputs and a weight [out, in1, in2]");
  BRASA_CHECK(
      input1.dim() >= 1 &&
          input1.sizes().slice(0, input1.dim() - 1) == input2.sizes().slice(0, input2.dim() - 1) &&
          input1.size(-1) == weight.size(1) && input2.size(-1) == weight.size(2),
      "bilinear: expected inputs [..., ", weight.size(1), "] and [..., ", weight.size(2),
      "] with equal leading dims, got ", input1.sizes(), " and ", input2.sizes());
  std::vector<int64_t> lead(input1.sizes().begin(), input1.sizes().end() - 1);
  Tensor x1 = input1.reshape({-1, weight.size(1)}), x2 = input2.reshape({-1, weight.size(2)});
  Tensor y = einsum("bi,oij,bj->bo", {x1, weight, x2});
  if (bias.defined()) y = y + bias;
  lead.push_back(weight.size(0));
  return y.reshape(lead);
}

Tensor pdist(const Tensor& input, double p) {
  BRASA_CHECK(input.defined() && input.dim() == 2,
              "pdist only supports 2D tensors, got: ", input.defined() ? input.dim() : 0, "D");
  BRASA_CHECK(input.is_floating_point(), "pdist only supports floating-point dtypes");
  BRASA_CHECK(p >= 0, "pdist only supports non-negative p values");
  const int64_t n = input.size(0);
  Tensor pairs = triu_indices(n, n, 1, TensorOptions().dtype(kLong).device(input.device()));
  Tensor diff = index_select(input, 0, pairs[0]) - index_select(input, 0, pairs[1]);
  return norm(diff, p, {1});
}

}  // namespace nn::functional

}  // namespace brasa
