// One rank of a 3-rank gloo DDP job whose rank 2 dies in the middle of a
// backward pass (with exit code 0, so that brasarun lets the others go on).
// Ranks 0 and 1 must then fail their backward within the group timeout,
// naming rank 2. Exits non-zero when they do not.

#include <brasa/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dist = brasa::distributed;
namespace F = brasa::nn::functional;
using namespace brasa;

int main() {
  using namespace std::chrono_literals;
  dist::init_process_group("gloo", "env://", -1, -1, 3s);
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
  auto store = dist::default_store();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    F::cross_entropy(ddp->forward(x), y).backward();
    std::printf("rank %d: backward succeeded without rank 2\n", rank);
    return 1;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto at = what.find("did not reach it");
    const auto list = what.rfind("rank(s) ", at);
    const bool named = at != std::string::npos && list != std::string::npos &&
                       what.substr(list, at - list).find('2') != std::string::npos;
    std::printf("rank %d: backward failed after %.1f s: %s\n", rank, waited, what.c_str());
    if (!named || waited > 15) return 1;
  }
  // Rank 0 serves the store the others still use to diagnose: it leaves last.
  if (store->add("diagnosed", 1) == 2) store->set("all_diagnosed", "1");
  if (rank == 0) store->wait({"all_diagnosed"});
  std::printf("rank %d: ok\n", rank);
  return 0;
}
