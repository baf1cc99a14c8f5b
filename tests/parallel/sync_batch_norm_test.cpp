// SyncBatchNorm over the ranks equals BatchNorm on the concatenated batch:
// outputs, running statistics and gradients; in DDP, training with it equals
// one process with the whole batch.

#include "ddp_test_util.h"

namespace {

using namespace brasa;
using namespace brasa::parallel_testing;
using brasa::testing::values;

// Rank r holds rows [offset(r), offset(r + 1)) of a batch of offset(world) rows.
int64_t offset(int r, bool uneven) { return uneven ? r * (r + 1) / 2 + r : 2 * r; }

void check_against_concatenated_batch(bool uneven) {
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const int64_t total = offset(world, uneven), begin = offset(rank, uneven),
                rows = offset(rank + 1, uneven) - begin;
  Generator gen(5);
  Tensor x_all = randn({total, 3, 4, 4}, &gen) * 2 + 1;
  Tensor w_all = randn({total, 3, 4, 4}, &gen);

  manual_seed(1);
  auto reference = nn::BatchNorm2d(nn::BatchNormOptions(3).momentum(0.3));
  {
    NoGradGuard no_grad;
    reference->weight.copy_(tensor({1.5, -0.5, 2.0}));
    reference->bias.copy_(tensor({0.1, 0.2, -0.3}));
  }
  auto synced = std::dynamic_pointer_cast<nn::BatchNorm2dImpl>(reference->clone());
  nn::SyncBatchNormImpl::convert_sync_batchnorm(synced);

  Tensor x_ref = x_all.clone().requires_grad_(true);
  (reference->forward(x_ref) * w_all).sum().backward();

  Tensor x = x_all.narrow(0, begin, rows).clone().requires_grad_(true);
  (synced->forward(x) * w_all.narrow(0, begin, rows)).sum().backward();

  EXPECT_TRUE(x.grad().allclose(x_ref.grad().narrow(0, begin, rows), 1e-4, 1e-5));
  // Parameter gradients are this rank's share; their sum is the whole batch's.
  Tensor gw = synced->weight.grad().clone(), gb = synced->bias.grad().clone();
  dist::all_reduce(gw);
  dist::all_reduce(gb);
  EXPECT_TRUE(gw.allclose(reference->weight.grad(), 1e-4, 1e-5)) << values(gw)[0];
  EXPECT_TRUE(gb.allclose(reference->bias.grad(), 1e-4, 1e-5));
  EXPECT_EQ(synced->num_batches_tracked.item<int64_t>(), 1);
}

TEST(SyncBatchNorm, EqualsBatchNormOnTheConcatenatedBatch) {
  init_once();
  check_against_concatenated_batch(false);
}

TEST(SyncBatchNorm, EqualsBatchNormWithUnevenBatches) {
  init_once();
  check_against_concatenated_batch(true);
}

TEST(SyncBatchNorm, RunningStatisticsAndOutputsAreTheWholeBatchs) {
  init_once();
  const int rank = dist::get_rank(), world = dist::get_world_size();
  Generator gen(9);
  Tensor x_all = randn({3 * world, 4}, &gen) * 3 + 2;
  auto reference = nn::BatchNorm1d(4);
  auto synced = nn::SyncBatchNorm(4);
  Tensor y_ref = reference->forward(x_all);
  Tensor y = synced->forward(x_all.narrow(0, 3 * rank, 3));
  EXPECT_TRUE(y.allclose(y_ref.narrow(0, 3 * rank, 3), 1e-4, 1e-5));
  EXPECT_TRUE(synced->running_mean.allclose(reference->running_mean, 1e-5, 1e-6));
  EXPECT_TRUE(synced->running_var.allclose(reference->running_var, 1e-5, 1e-6));
  // Eval mode uses the running statistics, locally.
  synced->eval();
  reference->eval();
  EXPECT_TRUE(synced->forward(x_all.narrow(0, 0, 2))
                  .allclose(reference->forward(x_all.narrow(0, 0, 2)), 1e-5, 1e-6));
  synced->train();
  EXPECT_ERROR("input of shape [6, 5] has 5 channels but the weight has 4",
               synced->forward(randn({6, 5})));
}

// Gradcheck of sync_batch_norm on a group of this rank alone (every rank makes
// every single-rank group): finite differences need the other ranks' inputs
// to hold still, which only a one-member group guarantees. The many-rank
// gradients are checked against BatchNorm on the concatenated batch above.
TEST(SyncBatchNorm, Gradcheck) {
  init_once();
  const int rank = dist::get_rank(), world = dist::get_world_size();
  dist::GroupPtr alone;
  for (int r = 0; r < world; ++r) {
    auto g = dist::new_group({r});
    if (r == rank) alone = g;
  }
  ASSERT_TRUE(alone);
  auto opts = TensorOptions().dtype(kDouble);
  Tensor x = randn({4, 3, 2}, opts).requires_grad_(true);
  Tensor w = randn({3}, opts).requires_grad_(true), b = randn({3}, opts).requires_grad_(true);
  EXPECT_TRUE(autograd::gradcheck(
      [&](const autograd::variable_list& in) {
        return autograd::variable_list{nn::functional::sync_batch_norm(
            in[0], Tensor(), Tensor(), in[1], in[2], 0.1, 1e-5, alone)};
      },
      {x, w, b}));
  EXPECT_ERROR("sync_batch_norm: expected more than 1 value per channel over all ranks, got 1",
               nn::functional::sync_batch_norm(randn({1, 3}), Tensor(), Tensor(), Tensor(),
                                               Tensor(), 0.1, 1e-5, alone));
}

TEST(SyncBatchNorm, TrainingUnderDDPEqualsOneProcessWithTheWholeBatch) {
  init_once();
  const int rank = dist::get_rank(), world = dist::get_world_size();
  manual_seed(31);
  auto net = std::make_shared<Net>(/*batch_norm=*/true);
  manual_seed(31);
  auto ref = std::make_shared<Net>(true);
  nn::convert_sync_batchnorm(net);
  auto ddp = nn::parallel::DistributedDataParallel(net);
  optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  optim::SGD ref_opt(ref->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  for (int s = 0; s < 4; ++s) {
    Batch whole = batch(s, 16), mine = slice(whole, rank, world);
    opt.zero_grad();
    F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
    opt.step();
    ref_opt.zero_grad();
    F::cross_entropy(ref->forward(whole.x), whole.y).backward();
    ref_opt.step();
  }
  EXPECT_LT(max_difference(*net, *ref), 2e-5);
  EXPECT_TRUE(net->bn->running_mean.allclose(ref->bn->running_mean, 1e-4, 1e-5));
}

}  // namespace
