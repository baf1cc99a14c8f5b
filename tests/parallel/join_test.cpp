// Uneven inputs under Join: every rank finishes, and the result is what the
// description says (gradients of the ranks still training, divided by the
// initial world size).

#include "ddp_test_util.h"

namespace {

using namespace brasa;
using namespace brasa::parallel_testing;
using nn::parallel::DistributedDataParallel;
using nn::parallel::Join;
using nn::parallel::JoinOptions;

TEST(Join, UnevenInputsFinishOnEveryRankWithTheExpectedModel) {
  init_once();
  const int rank = dist::get_rank(), world = dist::get_world_size();
  manual_seed(21);
  auto net = std::make_shared<Net>();
  manual_seed(21);
  auto ref = std::make_shared<Net>();
  auto ddp = DistributedDataParallel(net);
  optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1));
  optim::SGD ref_opt(ref->parameters(), optim::SGDOptions(0.1));
  auto steps_of = [](int r) { return 2 + r; };  // rank r has 2 + r batches
  {
    Join join({ddp.get()});
    for (int s = 0; s < steps_of(rank); ++s) {
      Batch mine = slice(batch(s, 16), rank, world);
      opt.zero_grad();
      F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
      opt.step();
    }
  }
  for (int s = 0; s < steps_of(world - 1); ++s) {
    Batch whole = batch(s, 16);
    ref_opt.zero_grad();
    Tensor loss = zeros({});
    for (int r = 0; r < world; ++r) {
      if (s >= steps_of(r)) continue;
      Batch part = slice(whole, r, world);
      loss = loss + F::cross_entropy(ref->forward(part.x), part.y) / world;
    }
    loss.backward();
    ref_opt.step();
  }
  EXPECT_LT(max_difference(*net, *ref), 2e-5);
}

TEST(Join, ThrowOnEarlyTerminationThrowsOnEveryRank) {
  init_once();
  const int rank = dist::get_rank(), world = dist::get_world_size();
  auto net = std::make_shared<Net>();
  auto ddp = DistributedDataParallel(net);
  const int steps = rank == 0 ? 1 : 3;
  try {
    Join join({ddp.get()}, JoinOptions().throw_on_early_termination(true));
    for (int s = 0; s < steps; ++s) {
      Batch mine = slice(batch(s, 16), rank, world);
      F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
    }
    join.finish();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(Join::kEarlyTermination), std::string::npos) << e.what();
  }
  // The group is still usable and in step.
  Tensor t = ones({1});
  dist::all_reduce(t);
  EXPECT_EQ(t.item<double>(), world);
}

}  // namespace
