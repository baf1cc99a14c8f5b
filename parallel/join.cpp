#include <brasa/ops/factory.h>
#include <brasa/parallel/join.h>

#include <exception>

namespace brasa::nn::parallel {

Join::Join(std::vector<DistributedDataParallelBase*> joinables, JoinOptions options)
    : options_(options), uncaught_(std::uncaught_exceptions()) {
  BRASA_CHECK(joinables.size() == 1 && joinables[0],
              "Join: expected one DistributedDataParallel, got ", joinables.size(),
              " joinables (this version joins one model at a time)");
  ddp_ = joinables[0];
  BRASA_CHECK(!ddp_->join_, "Join: this DistributedDataParallel is already in a Join");
  if (options_.enable()) ddp_->join_ = this;
}

Join::~Join() noexcept(false) {
  if (finished_) return;
  if (std::uncaught_exceptions() > uncaught_) {
    ddp_->join_ = nullptr;  // unwinding: no collectives
    return;
  }
  finish();
}

void Join::finish() {
  if (finished_) return;
  finished_ = true;
  ddp_->join_ = nullptr;
  if (!options_.enable()) return;
  const auto& group = ddp_->group_;
  for (;;) {
    Tensor active = zeros({1}, TensorOptions().dtype(kLong));
    std::vector<Tensor> ts{active};
    group->allreduce(ts)->wait();
    if (active.data_ptr<int64_t>()[0] == 0) break;
    if (options_.throw_on_early_termination()) BRASA_ERROR(kEarlyTermination);
    ddp_->join_shadow_iteration();
  }
  ddp_->join_sync_final_model();
}

}  // namespace brasa::nn::parallel
