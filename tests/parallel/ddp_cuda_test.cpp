// DistributedDataParallel on CUDA over ProcessGroupNCCL, in one process: a
// group of one rank (more ranks need more GPUs than the machines that run
// this have). Its gradients must equal those of the same model trained
// without DDP, step after step. Without a device it skips.
#include <brasa/comm/nccl/process_group_nccl.h>
#include <brasa/comm/store/hash_store.h>
#include <brasa/torch.h>
#include <gtest/gtest.h>

#include "../core/test_util.h"

namespace brasa {
namespace {

namespace dist = brasa::distributed;
namespace F = brasa::nn::functional;

nn::Sequential make_net() {
  manual_seed(5);
  return nn::Sequential(nn::Linear(12, 32), nn::ReLU(), nn::Linear(32, 32), nn::Tanh(),
                        nn::Linear(32, 3));
}

TEST(DdpOnCuda, OneNcclRankTrainsAsTheModelAlone) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  auto group = std::make_shared<dist::ProcessGroupNCCL>(std::make_shared<dist::HashStore>(), 0, 1);
  auto plain = make_net();
  plain->to(kCUDA);
  auto wrapped = make_net();
  wrapped->to(kCUDA);
  auto ddp = nn::parallel::DistributedDataParallel(
      wrapped.ptr(),
      nn::parallel::DistributedDataParallelOptions().process_group(group).bucket_cap_mb(0.001));
  optim::SGD plain_opt(plain->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  optim::SGD ddp_opt(ddp->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  for (int step = 0; step < 5; ++step) {
    Tensor x = randn({16, 12}).cuda();
    Tensor y = randint(0, 3, {16}).cuda();
    plain_opt.zero_grad();
    ddp_opt.zero_grad();
    F::cross_entropy(plain->forward(x), y).backward();
    F::cross_entropy(ddp->forward(x), y).backward();
    auto a = plain->parameters(), b = ddp->parameters();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_TRUE(b[i].grad().is_cuda());
      EXPECT_TRUE(allclose(b[i].grad().cpu(), a[i].grad().cpu(), 1e-6, 1e-7))
          << "step " << step << " parameter " << i;
    }
    plain_opt.step();
    ddp_opt.step();
  }
}

}  // namespace
}  // namespace brasa
