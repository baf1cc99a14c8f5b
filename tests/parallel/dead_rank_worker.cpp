// One rank of a 3-rank gloo DDP job whose rank 2 dies in the middle of a
// backward pass (with exit code 0, so that brasarun lets the others go on).
// Ranks 0 and 1 must then fail their backward within the group timeout,
// naming rank 2. Exits non-zero when they do not.

#include <brasa/torch.h>

#include "../comm/dead_rank_check.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dist = brasa::distributed;
namespace F = brasa::nn::functional;
using namespace brasa;

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  dist::init_process_group(argc > 1 ? argv[1] : "gloo", "env://", -1, -1, 3s);
  const int rank = dist::get_rank();
  auto net = nn::Sequential(nn::Linear(8, 32), nn::ReLU(), nn::Linear(32, 4));
  auto ddp = nn::parallel::DistributedDataParallel(
      net, nn::parallel::DistributedDataParallelOptions().bucket_cap_mb(0).first_bucket_mb(0));
  Tensor x = randn({4, 8});
  Tensor y = zeros({4}, TensorOptions().dtype(kLong));
  F::cross_entropy(ddp->forward(x), y).backward();  // one good step, everyone connected
  if (rank == 2) {
    // Gone once the last layer's gradient is reduced, before the first layer's.
    net->parameters()[0].register_hook([](const Tensor& g) {
      std::_Exit(0);
      return g;
    });
  }
  return dist::testing::expect_rank_2_named(rank, dist::default_store(), "backward", [&] {
    F::cross_entropy(ddp->forward(x), y).backward();
  });
}
