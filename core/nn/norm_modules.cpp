#include <brasa/autograd/grad_mode.h>
#include <brasa/nn/norm_modules.h>
#include <brasa/ops/reduction.h>

#include <algorithm>

namespace brasa {

namespace {
Tensor or_none(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }
nn::BatchNormOptions as_batch_norm(const nn::InstanceNormOptions& o) {
  return nn::BatchNormOptions(o.num_features_)
      .eps(o.eps_)
      .momentum(o.momentum_)
      .affine(o.affine_)
      .track_running_stats(o.track_running_stats_);
}
}  // namespace

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, bool training, double momentum,
                  double eps, bool /*cudnn_enabled*/) {
  return F::batch_norm(input, or_none(running_mean), or_none(running_var), or_none(weight),
                       or_none(bias), training, momentum, eps);
}

Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                     const std::optional<Tensor>& running_var, bool use_input_stats,
                     double momentum, double eps, bool /*cudnn_enabled*/) {
  return F::instance_norm(input, F::InstanceNormFuncOptions()
                                     .weight(or_none(weight))
                                     .bias(or_none(bias))
                                     .running_mean(or_none(running_mean))
                                     .running_var(or_none(running_var))
                                     .use_input_stats(use_input_stats)
                                     .momentum(momentum)
                                     .eps(eps));
}

namespace nn {

Tensor functional::instance_norm(const Tensor& input, const InstanceNormFuncOptions& o) {
  BRASA_CHECK(input.defined() && input.dim() >= 2,
              "instance_norm: expected an input [N, C, ...] of at least 2 dims, got shape ",
              input.defined() ? input.sizes() : IntArrayRef{});
  const int64_t N = input.size(0), C = input.size(1);
  const Tensor &mean = o.running_mean_, &var = o.running_var_;
  BRASA_CHECK(o.use_input_stats_ || (mean.defined() && var.defined()),
              "instance_norm: Expected running_mean and running_var to be defined when "
              "use_input_stats is false");
  for (const Tensor* t : {&mean, &var, &o.weight_, &o.bias_})
    BRASA_CHECK(!t->defined() || (t->dim() == 1 && t->size(0) == C),
                "instance_norm: expected running stats, weight and bias of shape [", C, "], got ",
                t->sizes());
  // PyTorch's check (its functional layer): the batch norm below would name
  // a reshaped [1, N * C, ...] input instead of the caller's.
  BRASA_CHECK(!o.use_input_stats_ || input.numel() / std::max<int64_t>(N * C, 1) > 1,
              "instance_norm: Expected more than 1 spatial element when training, got input "
              "size ",
              input.sizes());
  // Batch norm over one "batch" whose channels are the N * C instances.
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end());
  shape[0] = 1;
  shape[1] = N * C;
  auto repeat_n = [N](const Tensor& t) { return t.defined() ? t.repeat({N}) : Tensor(); };
  Tensor rm = repeat_n(mean), rv = repeat_n(var);
  Tensor out = batch_norm(input.contiguous().view(shape), rm, rv, repeat_n(o.weight_),
                          repeat_n(o.bias_), o.use_input_stats_, o.momentum_, o.eps_);
  if (o.use_input_stats_ && mean.defined()) {
    NoGradGuard ng;
    Tensor m = mean, v = var;  // the caller's buffers, updated in place
    m.copy_(rm.view({N, C}).mean({0}));
    v.copy_(rv.view({N, C}).mean({0}));
  }
  return out.view(input.sizes());
}

InstanceNormImpl::InstanceNormImpl(const InstanceNormOptions& o, int64_t dims, std::string name)
    : BatchNormImpl(as_batch_norm(o), 0, std::move(name)), dims_(dims) {}

Tensor InstanceNormImpl::forward(const Tensor& x) {
  BRASA_CHECK(x.dim() == dims_ + 1 || x.dim() == dims_ + 2, name(), ": expected ", dims_ + 1,
              "D (unbatched) or ", dims_ + 2, "D (batched) input, got shape ", x.sizes());
  const bool unbatched = x.dim() == dims_ + 1;
  Tensor in = unbatched ? x.unsqueeze(0) : x;
  BRASA_CHECK(in.size(1) == options.num_features_ || !options.affine_, name(), ": expected ",
              options.num_features_, " channels, got ", in.size(1));
  const bool track = options.track_running_stats_;
  Tensor out = F::instance_norm(in, F::InstanceNormFuncOptions()
                                        .running_mean(track ? running_mean : Tensor())
                                        .running_var(track ? running_var : Tensor())
                                        .weight(weight)
                                        .bias(bias)
                                        .use_input_stats(is_training() || !track)
                                        .momentum(options.momentum_)
                                        .eps(options.eps_));
  return unbatched ? out.squeeze(0) : out;
}

}  // namespace nn
}  // namespace brasa
