#pragma once
// SyncBatchNorm: batch normalization whose training-mode statistics (mean
// and variance per channel) are computed over the batches of every rank of
// a process group, forward and backward, as PyTorch's torch.nn.SyncBatchNorm.
// Over W ranks with batches x_1..x_W it computes what BatchNorm computes on
// their concatenation; the running statistics are updated with the global
// ones. In eval mode it is BatchNorm.
//
//   auto net = std::make_shared<Net>();                     // with BatchNorm2d layers
//   nn::SyncBatchNormImpl::convert_sync_batchnorm(net);      // before wrapping in DDP
//   auto ddp = nn::parallel::DistributedDataParallel(net);
//
// convert_sync_batchnorm converts every BatchNorm module of the tree in
// place (C++ modules keep their types, and the modules' forward keeps
// calling them): each one synchronizes its statistics from then on.
//
// The statistics travel on a process group of their own (made from the
// default group's ranks on the first synchronized forward, or the group
// given), so that they never interleave with DistributedDataParallel's
// gradient buckets, which are reduced on another thread.

#include <brasa/comm/distributed.h>
#include <brasa/nn/modules.h>

namespace brasa::nn {

class SyncBatchNormImpl : public Cloneable<SyncBatchNormImpl, BatchNormImpl> {
 public:
  explicit SyncBatchNormImpl(const BatchNormOptions& options,
                             distributed::GroupPtr process_group = nullptr);
  explicit SyncBatchNormImpl(int64_t num_features)
      : SyncBatchNormImpl(BatchNormOptions(num_features)) {}
  SyncBatchNormImpl(const SyncBatchNormImpl& o) : SyncBatchNormImpl(o.options, o.process_group_) {}

  // Makes every BatchNorm module in `module`'s tree synchronize its
  // statistics over `process_group` (null: a group of all ranks); returns
  // `module`.
  static std::shared_ptr<Module> convert_sync_batchnorm(
      std::shared_ptr<Module> module, distributed::GroupPtr process_group = nullptr);

 private:
  distributed::GroupPtr process_group_;
};
BRASA_MODULE(SyncBatchNorm);

// The free-function spelling of SyncBatchNormImpl::convert_sync_batchnorm.
template <class M>
std::shared_ptr<M> convert_sync_batchnorm(std::shared_ptr<M> module,
                                          distributed::GroupPtr process_group = nullptr) {
  SyncBatchNormImpl::convert_sync_batchnorm(module, std::move(process_group));
  return module;
}

namespace functional {
// Batch normalization of x ([N, C, ...]) with statistics over every rank of
// `group` (differentiable; the backward reduces over the group too).
// Updates running_mean/running_var (when defined) with the global statistics.
Tensor sync_batch_norm(const Tensor& x, Tensor running_mean, Tensor running_var,
                       const Tensor& weight, const Tensor& bias, double momentum, double eps,
                       const distributed::GroupPtr& group);
}  // namespace functional

}  // namespace brasa::nn
