#include <brasa/autograd/record.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>
#include <brasa/parallel/sync_batch_norm.h>

#include <mutex>

namespace brasa::nn {

namespace {

const autograd::BackwardName kAllReduceSumBackward("AllReduceSumBackward");

// Sum over the ranks of `group`; its gradient is the sum over the ranks of
// the gradients (every rank's output depends on every rank's input).
Tensor all_reduce_sum(const Tensor& x, const distributed::GroupPtr& group) {
  autograd::Recorder r(kAllReduceSumBackward, x);
  std::vector<Tensor> out{x.clone()};
  group->allreduce(out)->wait();
  if (r)
    r.finish(out[0], [group](autograd::FormulaNode&, const autograd::variable_list& g) {
      std::vector<Tensor> sum{g[0].clone()};
      group->allreduce(sum)->wait();
      return autograd::variable_list{sum[0]};
    });
  return out[0];
}

// The group the statistics travel on when none was given: one group of all
// ranks, made once per default group (all ranks reach their first
// synchronized forward in the same order, so all make it together).
distributed::GroupPtr statistics_group() {
  static std::mutex mu;
  static std::weak_ptr<distributed::ProcessGroup> made_for;
  static distributed::GroupPtr group;
  BRASA_CHECK(distributed::is_initialized(),
              "SyncBatchNorm: the default process group is not initialized; call "
              "init_process_group first (or use BatchNorm in a single process)");
  std::lock_guard<std::mutex> lock(mu);
  auto world = distributed::default_group();
  if (!group || made_for.lock() != world) {
    group = distributed::new_group();
    made_for = world;
  }
  return group;
}

void make_synchronized(BatchNormImpl& bn, distributed::GroupPtr requested) {
  bn.sync_forward = [requested](BatchNormImpl& m, const Tensor& x) {
    const auto group = requested ? requested : statistics_group();
    return functional::sync_batch_norm(
        x, m.options.track_running_stats_ ? m.running_mean : Tensor(),
        m.options.track_running_stats_ ? m.running_var : Tensor(), m.weight, m.bias,
        m.options.momentum_, m.options.eps_, group);
  };
}

}  // namespace

namespace functional {

Tensor sync_batch_norm(const Tensor& x, Tensor running_mean, Tensor running_var,
                       const Tensor& weight, const Tensor& bias, double momentum, double eps,
                       const distributed::GroupPtr& group) {
  BRASA_CHECK(x.dim() >= 2,
              "sync_batch_norm: expected an input of at least 2 dimensions [N, C, ...], got shape ",
              x.sizes());
  const int64_t channels = x.size(1);
  BRASA_CHECK(!weight.defined() || weight.numel() == channels, "sync_batch_norm: input of shape ",
              x.sizes(), " has ", channels, " channels but the weight has ", weight.numel());
  std::vector<int64_t> dims{0}, shape(static_cast<size_t>(x.dim()), 1);
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  shape[1] = channels;

  // Global count and mean: one allreduce of [sum per channel, count].
  const double local_count = static_cast<double>(x.numel() / std::max<int64_t>(channels, 1));
  Tensor count = full({1}, local_count, TensorOptions().dtype(x.scalar_type()));
  Tensor totals = all_reduce_sum(cat({x.sum(dims), count}), group);
  Tensor n = totals.narrow(0, channels, 1).detach();
  const double global_count = n.item<double>();
  BRASA_CHECK(global_count > 1,
              "sync_batch_norm: expected more than 1 value per channel over all ranks, got ",
              global_count, " (input shape ", x.sizes(), " on this rank)");
  Tensor mean = totals.narrow(0, 0, channels) / global_count;
  // Global (biased) variance around it: a second allreduce, exact for
  // inputs far from zero.
  Tensor centered = x - mean.view(shape);
  Tensor var = all_reduce_sum((centered * centered).sum(dims), group) / global_count;
  Tensor y = centered * (var + eps).rsqrt().view(shape);
  if (weight.defined()) y = y * weight.view(shape);
  if (bias.defined()) y = y + bias.view(shape);

  if (running_mean.defined()) {
    NoGradGuard no_grad;
    running_mean.mul_(1 - momentum).add_(mean.detach() * momentum);
    running_var.mul_(1 - momentum)
        .add_(var.detach() * (momentum * global_count / (global_count - 1)));
  }
  return y;
}

}  // namespace functional

SyncBatchNormImpl::SyncBatchNormImpl(const BatchNormOptions& options,
                                     distributed::GroupPtr process_group)
    : Cloneable(options, 0, "SyncBatchNorm"), process_group_(std::move(process_group)) {
  make_synchronized(*this, process_group_);
}

std::shared_ptr<Module> SyncBatchNormImpl::convert_sync_batchnorm(
    std::shared_ptr<Module> module, distributed::GroupPtr process_group) {
  BRASA_CHECK(module, "convert_sync_batchnorm: the module is null");
  for (const auto& m : module->modules())
    if (auto* bn = dynamic_cast<BatchNormImpl*>(m.get())) make_synchronized(*bn, process_group);
  return module;
}

}  // namespace brasa::nn
