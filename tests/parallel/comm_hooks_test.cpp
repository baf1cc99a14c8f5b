// Communication hooks: fp16/bf16 compression against the plain allreduce,
// PowerSGD against its description, and user hooks.

#include "ddp_test_util.h"

namespace {

using namespace brasa;
using namespace brasa::parallel_testing;
using nn::parallel::DistributedDataParallel;
using nn::parallel::DistributedDataParallelOptions;
using nn::parallel::GradBucket;
namespace hooks = nn::parallel::default_hooks;
namespace psgd = nn::parallel::powerSGD;

// One step's gradients of a fresh Net with `hook` registered (none: default).
std::vector<Tensor> gradients_with(
    const std::function<void(nn::parallel::DistributedDataParallel<Net>&)>& hook) {
  manual_seed(11);
  auto net = std::make_shared<Net>();
  auto ddp = DistributedDataParallel(net, DistributedDataParallelOptions().bucket_cap_mb(0.001));
  if (hook) hook(ddp);
  Batch mine = slice(batch(0, 16), dist::get_rank(), dist::get_world_size());
  F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
  std::vector<Tensor> grads;
  for (const Tensor& p : net->parameters()) grads.push_back(p.grad().clone());
  return grads;
}

TEST(CommHooks, Fp16AndBf16CompressionStayWithinTheirPrecision) {
  init_once();
  auto exact = gradients_with(nullptr);
  auto fp16 = gradients_with(
      [](auto& ddp) { ddp->register_comm_hook(dist::GroupPtr(), hooks::fp16_compress_hook); });
  auto bf16 = gradients_with(
      [](auto& ddp) { ddp->register_comm_hook(nullptr, hooks::bf16_compress_hook); });
  for (size_t i = 0; i < exact.size(); ++i) {
    const double scale = exact[i].abs().max().item<double>() + 1e-12;
    EXPECT_LE((fp16[i] - exact[i]).abs().max().item<double>(), 2e-3 * scale) << i;
    EXPECT_LE((bf16[i] - exact[i]).abs().max().item<double>(), 1.6e-2 * scale) << i;
    EXPECT_FALSE(fp16[i].equal(exact[i]) && bf16[i].equal(exact[i]) &&
                 exact[i].abs().max().item<double>() > 1e-3)
        << "compression changed nothing in tensor " << i;
  }
}

TEST(CommHooks, AUserHookSeesEveryBucketInOrderWithItsState) {
  init_once();
  auto seen = std::make_shared<std::vector<size_t>>();
  auto grads = gradients_with([&](auto& ddp) {
    ddp->register_comm_hook(seen, [](std::vector<size_t>& s, GradBucket& b) {
      s.push_back(b.index());
      return hooks::allreduce_hook(nullptr, b);
    });
    EXPECT_ERROR("register_comm_hook can only be called once",
                 ddp->register_comm_hook(nullptr, hooks::allreduce_hook));
  });
  auto exact = gradients_with(nullptr);
  ASSERT_FALSE(seen->empty());
  for (size_t i = 0; i < seen->size(); ++i) EXPECT_EQ((*seen)[i], i);
  for (size_t i = 0; i < exact.size(); ++i) EXPECT_TRUE(grads[i].equal(exact[i])) << i;
}

TEST(CommHooks, PowerSGDOrthogonalizes) {
  Tensor m = randn({20, 3});
  psgd::orthogonalize(m);
  Tensor gram = mm(m.t(), m);
  EXPECT_TRUE(gram.allclose(eye(3), 1e-4, 1e-5));
}

// A fixed gradient per rank, compressed at rank 2 every iteration: the first
// iterations are exact allreduces; then, with error feedback, what was lost
// is sent later, so the average of the approximations converges to the true
// average gradient (the error shrinks like 1/T), while one approximation
// alone stays a rank-1 guess.
TEST(CommHooks, PowerSGDErrorFeedbackConvergesToTheAverage) {
  init_once();
  const int rank = dist::get_rank(), world = dist::get_world_size();
  Tensor param = zeros({12, 8});
  Generator gen(77 + rank);
  Tensor local = randn({12 * 8}, &gen);
  Tensor mean = local.clone();
  dist::all_reduce(mean);
  mean.div_(world);
  psgd::PowerSGDState state(nullptr, /*matrix_approximation_rank=*/2, /*start_powerSGD_iter=*/2);
  Tensor sum = zeros({12 * 8});
  std::vector<double> errors;
  const double norm = mean.norm().item<double>();
  for (int t = 0; t < 62; ++t) {
    GradBucket bucket(0, 1, local.clone(), {param}, {0});
    auto work = psgd::powerSGD_hook(state, bucket);
    Tensor out = work->result()[0];
    if (t < 2) {
      EXPECT_TRUE(out.allclose(mean, 1e-5, 1e-6)) << "iteration " << t << " is a plain allreduce";
      continue;
    }
    if (t == 2) {
      // One approximation alone: rank 2 of a full-rank matrix.
      EXPECT_GT((out - mean).norm().item<double>() / norm, 0.3);
    }
    sum.add_(out);
    errors.push_back((sum / (t - 1.0) - mean).norm().item<double>() / norm);
  }
  EXPECT_EQ(state.iter, 62);
  EXPECT_LT(errors[30], errors[5]);
  EXPECT_LT(errors.back(), errors[30]);
  EXPECT_LT(errors.back(), errors.front() / 4);
  EXPECT_LT(state.total_numel_after_compression, state.total_numel_before_compression);
}

TEST(CommHooks, PowerSGDTrainsIdenticallyOnEveryRank) {
  init_once();
  manual_seed(13);
  auto net = std::make_shared<Net>();
  auto ddp = DistributedDataParallel(net);
  auto state = std::make_shared<psgd::PowerSGDState>(nullptr, 2, 1);
  ddp->register_comm_hook(state, psgd::powerSGD_hook);
  optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.05));
  for (int s = 0; s < 4; ++s) {
    Batch mine = slice(batch(s, 16), dist::get_rank(), dist::get_world_size());
    opt.zero_grad();
    F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
    opt.step();
  }
  EXPECT_EQ(state->iter, 4);
  for (const Tensor& p : net->parameters())
    for (const Tensor& q : gather_all(p)) EXPECT_TRUE(q.allclose(p, 1e-5, 1e-6));
}

}  // namespace
