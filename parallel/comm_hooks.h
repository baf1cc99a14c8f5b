#pragma once
// Communication hooks for DistributedDataParallel::register_comm_hook, as in
// torch.distributed.algorithms.ddp_comm_hooks. Each takes a state and the
// bucket and returns a completed Work whose first result is the reduced
// (averaged) bucket. A null process group means the default group.
//
//   ddp->register_comm_hook(distributed::GroupPtr(), default_hooks::fp16_compress_hook);
//   auto state = std::make_shared<powerSGD::PowerSGDState>(nullptr, /*rank=*/2);
//   ddp->register_comm_hook(state, powerSGD::powerSGD_hook);

#include <brasa/comm/distributed.h>
#include <brasa/parallel/grad_bucket.h>

#include <map>

namespace brasa::nn::parallel {

namespace default_hooks {
// Divides by the group size and allreduces (what DDP does without a hook).
std::shared_ptr<distributed::Work> allreduce_hook(const distributed::GroupPtr& group,
                                                  GradBucket& bucket);
// The same with a divisor of the caller's choice (0: the group size).
std::shared_ptr<distributed::Work> allreduce_divided_by(const distributed::GroupPtr& group,
                                                        GradBucket& bucket, int64_t divisor);
// Sends the bucket as fp16 / bf16 (half the bytes), reduces, and returns it in
// the bucket's dtype.
std::shared_ptr<distributed::Work> fp16_compress_hook(const distributed::GroupPtr& group,
                                                      GradBucket& bucket);
std::shared_ptr<distributed::Work> bf16_compress_hook(const distributed::GroupPtr& group,
                                                      GradBucket& bucket);
}  // namespace default_hooks

namespace powerSGD {

// PowerSGD (Vogels et al., NeurIPS 2019) as PyTorch's powerSGD_hook runs it:
// each gradient matrix M (a parameter's gradient viewed as rows x rest) is
// approximated by P Q^T of rank `matrix_approximation_rank`: P = M Q,
// allreduce P, orthonormalize its columns, Q = M^T P, allreduce Q, M ~ P Q^T /
// world size. Vectors, and matrices too small to gain min_compression_rate,
// are allreduced as they are. With error feedback the part of the local
// gradient the approximation lost is added to the next iteration's; with warm
// start Q carries over between iterations (one power-iteration step each).
// The first start_powerSGD_iter iterations are reduced uncompressed.
struct PowerSGDState {
  explicit PowerSGDState(distributed::GroupPtr process_group, int matrix_approximation_rank = 1,
                         int64_t start_powerSGD_iter = 1000, double min_compression_rate = 2,
                         bool use_error_feedback = true, bool warm_start = true,
                         double orthogonalization_epsilon = 0, uint64_t random_seed = 0)
      : process_group(std::move(process_group)),
        matrix_approximation_rank(matrix_approximation_rank),
        start_powerSGD_iter(start_powerSGD_iter),
        min_compression_rate(min_compression_rate),
        use_error_feedback(use_error_feedback),
        warm_start(warm_start),
        orthogonalization_epsilon(orthogonalization_epsilon),
        random_seed(random_seed) {}

  distributed::GroupPtr process_group;
  int matrix_approximation_rank;
  int64_t start_powerSGD_iter;
  double min_compression_rate;
  bool use_error_feedback;
  bool warm_start;
  double orthogonalization_epsilon;
  uint64_t random_seed;

  // Iterations seen (counted at each iteration's last bucket).
  int64_t iter = 0;
  // Per bucket index: the error of the last compression, and the Qs.
  std::map<size_t, Tensor> error_dict;
  std::map<size_t, std::vector<Tensor>> q_memory_dict;
  // Elements sent compressed and what they stand for (compression statistics).
  int64_t total_numel_before_compression = 0, total_numel_after_compression = 0;
};

std::shared_ptr<distributed::Work> powerSGD_hook(PowerSGDState& state, GradBucket& bucket);

// Orthonormalizes the columns of the 2-D float tensor m in place (Gram-Schmidt).
void orthogonalize(Tensor& m, double epsilon = 0);

}  // namespace powerSGD

}  // namespace brasa::nn::parallel
