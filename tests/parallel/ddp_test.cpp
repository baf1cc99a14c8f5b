// DistributedDataParallel run by real ranks (mpi under mpirun, gloo under
// brasarun; see tests/parallel/CMakeLists.txt). The core property: N ranks
// with batch B/N each end with the parameters of one process with batch B.

#include "ddp_test_util.h"

namespace {

using namespace brasa;
using namespace brasa::parallel_testing;
using brasa::testing::values;
using nn::parallel::DistributedDataParallel;
using nn::parallel::DistributedDataParallelOptions;

const auto* leave_together = ::testing::AddGlobalTestEnvironment(new dist::testing::LeaveTogether);

int rank() { return dist::get_rank(); }
int world() { return dist::get_world_size(); }
constexpr int64_t kBatch = 16;

// Trains a DDP model and a local reference on the whole batch for `steps`
// steps; returns the largest parameter difference. With batch norm each
// slice is normalized by its own statistics, so the reference averages the
// losses of the slices (what DDP computes) instead of one whole-batch loss.
double train_and_compare(const std::string& optimizer, const DistributedDataParallelOptions& opts,
                         bool batch_norm = false, bool twice = false, int steps = 4) {
  manual_seed(7);
  auto net = std::make_shared<Net>(batch_norm, twice);
  manual_seed(7);
  auto ref = std::make_shared<Net>(batch_norm, twice);
  auto ddp = DistributedDataParallel(net, opts);
  auto opt = make_optimizer(optimizer, ddp->parameters());
  auto ref_opt = make_optimizer(optimizer, ref->parameters());
  for (int s = 0; s < steps; ++s) {
    Batch whole = batch(s, kBatch), mine = slice(whole, rank(), world());
    opt->zero_grad();
    F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
    opt->step();

    ref_opt->zero_grad();
    if (!batch_norm) {
      F::cross_entropy(ref->forward(whole.x), whole.y).backward();
    } else {
      Tensor loss = zeros({});
      for (int r = 0; r < world(); ++r) {
        Batch part = slice(whole, r, world());
        loss = loss + F::cross_entropy(ref->forward(part.x), part.y) / world();
      }
      loss.backward();
    }
    ref_opt->step();
  }
  return max_difference(*net, *ref);
}

TEST(DistributedDataParallel, EquivalentToOneProcessWithTheWholeBatch) {
  init_once();
  for (const char* optimizer : {"sgd", "adam"})
    for (double cap : {0.0, 0.0005, 25.0})
      for (bool view : {false, true}) {
        SCOPED_TRACE(std::string(optimizer) + " bucket_cap_mb " + std::to_string(cap) +
                     " gradient_as_bucket_view " + std::to_string(view));
        auto opts =
            DistributedDataParallelOptions().bucket_cap_mb(cap).gradient_as_bucket_view(view);
        if (cap == 0) opts.first_bucket_mb(0);
        EXPECT_LT(train_and_compare(optimizer, opts), 2e-5);
      }
}

TEST(DistributedDataParallel, EquivalentWithBatchNormAndAParameterUsedTwice) {
  init_once();
  for (bool view : {false, true}) {
    auto opts = DistributedDataParallelOptions().gradient_as_bucket_view(view);
    EXPECT_LT(train_and_compare("sgd", opts, /*batch_norm=*/true), 2e-5) << "view " << view;
    EXPECT_LT(train_and_compare("sgd", opts, false, /*twice=*/true), 2e-5) << "view " << view;
  }
}

TEST(DistributedDataParallel, BucketsAreRebuiltOnceAndStatsAreKept) {
  init_once();
  manual_seed(3);
  auto net = std::make_shared<Net>(false, true);
  auto ddp = DistributedDataParallel(
      net, DistributedDataParallelOptions().bucket_cap_mb(0.0005).first_bucket_mb(0.0001));
  int64_t bytes = 0;
  for (const Tensor& p : net->parameters()) bytes += p.numel() * p.element_size();
  auto before = ddp->stats();
  EXPECT_FALSE(before.buckets_rebuilt);
  EXPECT_GT(before.bucket_sizes.size(), 2u);
  optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1));
  for (int s = 0; s < 3; ++s) {
    Batch mine = slice(batch(s, kBatch), rank(), world());
    opt.zero_grad();
    F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
    opt.step();
  }
  auto st = ddp->stats();
  EXPECT_EQ(st.iterations, 3);
  EXPECT_TRUE(st.buckets_rebuilt);
  int64_t total = 0;
  for (int64_t b : st.bucket_sizes) total += b;
  EXPECT_EQ(total, bytes);
  EXPECT_EQ(st.world_size, world());
  EXPECT_EQ(st.backend, dist::testing::backend());
  EXPECT_GT(st.avg_forward_compute_time_ms, 0);
  EXPECT_GT(st.avg_backward_compute_time_ms, 0);
  EXPECT_GT(st.avg_backward_comm_time_ms, 0);
  EXPECT_GE(st.avg_exposed_comm_time_ms, 0);
  // Each bucket's own time (every rebuilt bucket was reduced twice).
  ASSERT_EQ(st.avg_bucket_comm_time_ms.size(), st.bucket_sizes.size());
  for (double ms : st.avg_bucket_comm_time_ms) EXPECT_GT(ms, 0);
  // Every rank ends with the same parameters.
  for (const Tensor& p : net->parameters())
    for (const Tensor& q : gather_all(p)) EXPECT_TRUE(q.equal(p));
}

TEST(DistributedDataParallel, NoSyncAccumulatesLocallyThenReducesTheSum) {
  init_once();
  manual_seed(5);
  auto net = std::make_shared<Net>();
  manual_seed(5);
  auto ref = std::make_shared<Net>();
  auto ddp = DistributedDataParallel(net);
  const int k = 3;
  const int64_t micro = 4 * world();
  {
    auto guard = ddp->no_sync();
    for (int j = 0; j < k - 1; ++j) {
      Batch mine = slice(batch(j, micro), rank(), world());
      F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
    }
    // Still local: the ranks' gradients differ.
    auto grads = gather_all(net->fc1->weight.grad());
    EXPECT_FALSE(grads[0].equal(grads[1]));
  }
  Batch last = slice(batch(k - 1, micro), rank(), world());
  F::cross_entropy(ddp->forward(last.x), last.y).backward();
  for (int j = 0; j < k; ++j) {
    Batch whole = batch(j, micro);
    F::cross_entropy(ref->forward(whole.x), whole.y).backward();
  }
  auto mine = net->named_parameters(), theirs = ref->named_parameters();
  for (const auto& p : mine)
    EXPECT_TRUE(p.value().grad().allclose(theirs[p.key()].grad(), 1e-4, 1e-6)) << p.key();
}

TEST(DistributedDataParallel, AParameterWithoutGradientIsNamedOnTheNextForward) {
  init_once();
  auto net = std::make_shared<Net>(false, false, /*extra=*/true);
  auto ddp = DistributedDataParallel(net);
  Batch mine = slice(batch(0, kBatch), rank(), world());
  F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
  try {
    ddp->forward(mine.x);
    ADD_FAILURE() << "no error for the parameters that got no gradient";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Expected to have finished reduction in the prior iteration before "
                        "starting a new one"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("find_unused_parameters(true)"), std::string::npos) << what;
    EXPECT_NE(what.find("did not receive grad for rank " + std::to_string(rank()) +
                        ": unused.weight, unused.bias"),
              std::string::npos)
        << what;
  }
}

TEST(DistributedDataParallel, FindUnusedParameters) {
  init_once();
  for (bool static_graph : {false, true}) {
    SCOPED_TRACE(static_graph ? "static_graph" : "find_unused_parameters");
    manual_seed(9);
    auto net = std::make_shared<Net>(false, false, true);
    manual_seed(9);
    auto ref = std::make_shared<Net>(false, false, true);
    auto opts = static_graph ? DistributedDataParallelOptions().static_graph(true)
                             : DistributedDataParallelOptions().find_unused_parameters(true);
    auto ddp = DistributedDataParallel(net, opts);
    optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1));
    optim::SGD ref_opt(ref->parameters(), optim::SGDOptions(0.1));
    for (int s = 0; s < 3; ++s) {
      Batch whole = batch(s, kBatch), mine = slice(whole, rank(), world());
      opt.zero_grad();
      F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
      // No rank used it: its gradient stays undefined.
      EXPECT_FALSE(net->unused->weight.grad().defined());
      opt.step();
      ref_opt.zero_grad();
      F::cross_entropy(ref->forward(whole.x), whole.y).backward();
      ref_opt.step();
    }
    EXPECT_LT(max_difference(*net, *ref), 2e-5);
  }
  // Used by rank 0 only: reduced as zero elsewhere, the same on every rank.
  manual_seed(9);
  auto net = std::make_shared<Net>(false, false, true);
  manual_seed(9);
  auto ref = std::make_shared<Net>(false, false, true);
  auto ddp =
      DistributedDataParallel(net, DistributedDataParallelOptions().find_unused_parameters(true));
  Batch whole = batch(0, kBatch), mine = slice(whole, rank(), world());
  net->use_extra = rank() == 0;
  F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
  Tensor loss = zeros({});
  for (int r = 0; r < world(); ++r) {
    ref->use_extra = r == 0;
    Batch part = slice(whole, r, world());
    loss = loss + F::cross_entropy(ref->forward(part.x), part.y) / world();
  }
  loss.backward();
  ASSERT_TRUE(net->unused->weight.grad().defined());
  EXPECT_TRUE(net->unused->weight.grad().allclose(ref->unused->weight.grad(), 1e-4, 1e-6));
  EXPECT_TRUE(net->fc1->weight.grad().allclose(ref->fc1->weight.grad(), 1e-4, 1e-6));
}

TEST(DistributedDataParallel, RanksWithDifferentModelsFailNamingTheParameter) {
  init_once();
  const int odd = world() - 1;
  auto seq = nn::Sequential(nn::Linear(8, 16), nn::Linear(16, rank() == odd ? 5 : 4));
  try {
    auto ddp = DistributedDataParallel(seq);
    ADD_FAILURE() << "no error for different models";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("The first differing parameter is number 2, '1.weight'"), std::string::npos)
        << what;
    EXPECT_NE(what.find("rank 0 has shape [4, 16] (Float); rank " + std::to_string(odd) +
                        " has shape [5, 16] (Float)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("Differing rank(s): " + std::to_string(odd)), std::string::npos) << what;
  }
}

TEST(DistributedDataParallel, ConstructionBroadcastsRankZerosStateAndBuffersBeforeForward) {
  init_once();
  manual_seed(100 + rank());  // different on every rank
  auto net = std::make_shared<Net>(true);
  auto ddp = DistributedDataParallel(net);
  for (const Tensor& p : net->parameters())
    for (const Tensor& q : gather_all(p)) EXPECT_TRUE(q.equal(p));
  {
    NoGradGuard no_grad;
    net->bn->running_mean.fill_(rank() + 1.0);
    ddp->eval();
    EXPECT_FALSE(net->is_training());
    ddp->forward(batch(0, 4).x);
  }
  EXPECT_EQ(values(net->bn->running_mean), std::vector<double>(16, 1.0));
  // Without broadcast_buffers each rank keeps its own.
  auto net2 = std::make_shared<Net>(true);
  auto ddp2 =
      DistributedDataParallel(net2, DistributedDataParallelOptions().broadcast_buffers(false));
  NoGradGuard no_grad;
  net2->bn->running_mean.fill_(rank() + 1.0);
  ddp2->eval();
  ddp2->forward(batch(0, 4).x);
  EXPECT_EQ(values(net2->bn->running_mean), std::vector<double>(16, rank() + 1.0));
}

TEST(DistributedDataParallel, NamesAreTheWrappedModules) {
  init_once();
  auto net = std::make_shared<Net>(true);
  auto ddp = DistributedDataParallel(net);
  EXPECT_EQ(ddp->named_parameters().keys(), net->named_parameters().keys());
  EXPECT_EQ(ddp->state_dict().keys(), net->state_dict().keys());
  EXPECT_EQ(ddp->module().get(), net.get());
  EXPECT_EQ(ddp->parameters().size(), net->parameters().size());
  EXPECT_ERROR("move the module before wrapping it", ddp->to(Device(kCPU)));
  Net bare(true);
  bare.load_state_dict(ddp->state_dict());
  EXPECT_TRUE(bare.fc1->weight.equal(net->fc1->weight));
}

}  // namespace

namespace {

using namespace brasa;
using namespace brasa::parallel_testing;
using nn::parallel::DistributedDataParallel;
using nn::parallel::DistributedDataParallelOptions;

TEST(DistributedDataParallel, BadUseGetsClearErrors) {
  init_once();
  // Nothing to synchronize.
  auto frozen = nn::Linear(4, 2);
  for (auto& p : frozen->parameters()) p.requires_grad_(false);
  EXPECT_ERROR(
      "DistributedDataParallel is not needed when a module doesn't have any parameter "
      "that requires a gradient",
      DistributedDataParallel(frozen));
  EXPECT_ERROR("bucket_cap_mb (-1) and first_bucket_mb (1) must not be negative",
               DistributedDataParallel(std::make_shared<Net>(),
                                       DistributedDataParallelOptions().bucket_cap_mb(-1)));
  auto net = std::make_shared<Net>();
  auto ddp = DistributedDataParallel(net);
  EXPECT_ERROR("convert the module before wrapping it", ddp->to(kDouble));
  EXPECT_ERROR("cannot be cloned", ddp->clone());
  Batch mine = slice(batch(0, 16), dist::get_rank(), dist::get_world_size());
  F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
  EXPECT_ERROR("register_comm_hook must be called before the first backward",
               ddp->register_comm_hook(nullptr, nn::parallel::default_hooks::allreduce_hook));
  // A second backward pass over an unfinished reduction marks parameters twice.
  auto with_extra = DistributedDataParallel(std::make_shared<Net>(false, false, true));
  Tensor loss = F::cross_entropy(with_extra->forward(mine.x), mine.y);
  loss.backward({}, /*retain_graph=*/true);
  EXPECT_ERROR("Expected to mark a variable ready only once", loss.backward());
  EXPECT_ERROR("Expected to have finished reduction", with_extra->forward(mine.x));
  EXPECT_ERROR("has 2 channels but the weight has 3", nn::SyncBatchNorm(3)->forward(randn({4, 2})));
}

// The issue's snippet, spelled as it spells it.
TEST(DistributedDataParallel, TheIssueSnippet) {
  init_once();
  namespace dist = brasa::distributed;
  ASSERT_TRUE(dist::is_initialized());
  auto net = std::make_shared<Net>();
  auto ddp = torch::nn::parallel::DistributedDataParallel(
      net, torch::nn::parallel::DistributedDataParallelOptions().bucket_cap_mb(25));
  torch::optim::SGD opt(ddp->parameters(), torch::optim::SGDOptions(0.1));
  Batch mine = slice(batch(0, 16), dist::get_rank(), dist::get_world_size());
  auto loss = torch::nn::functional::cross_entropy(ddp->forward(mine.x), mine.y);
  loss.backward();
  opt.step();
  {
    auto guard = ddp->no_sync();
    torch::nn::functional::cross_entropy(ddp->forward(mine.x), mine.y).backward();
  }
  std::shared_ptr<Net> wrapped = ddp->module();
  EXPECT_EQ(wrapped.get(), net.get());
  for (const Tensor& p : net->parameters())
    for (const Tensor& q : gather_all(p)) EXPECT_TRUE(q.equal(p));
}

struct SharedTwice : nn::Module {
  SharedTwice() {
    Tensor w = randn({2});
    register_parameter("a", w);
    register_parameter("b", w);
  }
};

TEST(DistributedDataParallel, AHookOrAParameterThatBreaksTheRulesIsNamed) {
  init_once();
  EXPECT_ERROR("parameter 'b' is the same tensor as 'a'",
               DistributedDataParallel(std::make_shared<SharedTwice>()));
  Batch mine = slice(batch(0, 16), dist::get_rank(), dist::get_world_size());
  auto none = DistributedDataParallel(std::make_shared<Net>());
  none->register_comm_hook(nullptr, [](const dist::GroupPtr&, nn::parallel::GradBucket&) {
    return std::shared_ptr<dist::Work>();
  });
  EXPECT_ERROR("the communication hook returned no Work for bucket 0",
               F::cross_entropy(none->forward(mine.x), mine.y).backward());
  auto wrong = DistributedDataParallel(std::make_shared<Net>());
  wrong->register_comm_hook(nullptr, [](const dist::GroupPtr&, nn::parallel::GradBucket&) {
    return dist::completed_work("wrong", {zeros({3})});
  });
  EXPECT_ERROR("the communication hook returned 3 elements for bucket 0",
               F::cross_entropy(wrong->forward(mine.x), mine.y).backward());
  auto empty = DistributedDataParallel(std::make_shared<Net>());
  EXPECT_ERROR("register_comm_hook got an empty hook",
               empty->register_comm_hook(nn::parallel::CommHook()));
  Tensor v = zeros({3});
  EXPECT_ERROR("powerSGD::orthogonalize: expected a 2-D tensor, got shape [3]",
               nn::parallel::powerSGD::orthogonalize(v));
  nn::parallel::powerSGD::PowerSGDState state(nullptr, 1, /*start_powerSGD_iter=*/0);
  nn::parallel::GradBucket half(0, 1, zeros({4}, TensorOptions().dtype(kHalf)),
                                {zeros({2, 2}, TensorOptions().dtype(kHalf))}, {0});
  EXPECT_ERROR("powerSGD_hook: expected a Float or Double gradient bucket, got Half",
               nn::parallel::powerSGD::powerSGD_hook(state, half));
  auto ddp = DistributedDataParallel(std::make_shared<Net>());
  EXPECT_ERROR("Join: expected one DistributedDataParallel, got 0 joinables",
               nn::parallel::Join({}));
  {
    nn::parallel::Join join({ddp.get()});
    EXPECT_ERROR("this DistributedDataParallel is already in a Join",
                 nn::parallel::Join({ddp.get()}));
  }  // every rank finishes at once: nothing to shadow
}

TEST(DistributedDataParallel, GradientAsBucketViewLeavesGradientsInTheBuckets) {
  init_once();
  auto net = std::make_shared<Net>();
  auto ddp = DistributedDataParallel(
      net, DistributedDataParallelOptions().gradient_as_bucket_view(true).bucket_cap_mb(25));
  optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1));
  for (int s = 0; s < 2; ++s) {
    Batch mine = slice(batch(s, 16), dist::get_rank(), dist::get_world_size());
    opt.zero_grad(/*set_to_none=*/false);
    F::cross_entropy(ddp->forward(mine.x), mine.y).backward();
    opt.step();
  }
  // One bucket: every gradient lies in one buffer, in reverse registration order.
  auto params = net->parameters();
  const char* last = static_cast<const char*>(params.back().grad().data_ptr());
  for (const Tensor& p : params) {
    const char* g = static_cast<const char*>(p.grad().data_ptr());
    EXPECT_GE(g, last);
    EXPECT_LT(g, last + 4 * 1024 * 1024);
    for (const Tensor& q : gather_all(p.grad())) EXPECT_TRUE(q.equal(p.grad()));
  }
}

}  // namespace
