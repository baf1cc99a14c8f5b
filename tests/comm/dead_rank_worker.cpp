// One rank of a gloo job whose rank 2 dies (with exit code 0, so that
// brasarun lets the others go on) right after the group is set up. Ranks 0
// and 1 must then fail their allreduce within the timeout, naming rank 2.
// Exits non-zero when they do not.

#include <brasa/comm/distributed.h>
#include <brasa/ops/factory.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dist = brasa::distributed;

int main() {
  using namespace std::chrono_literals;
  dist::init_process_group("gloo", "env://", -1, -1, 3s);
  const int rank = dist::get_rank();
  // Everyone is connected (barrier) and ranks 0 and 1 know it before rank 2 goes.
  dist::barrier();
  auto store = dist::default_store();
  if (rank != 2) store->set("connected/" + std::to_string(rank), "1");
  if (rank == 2) {
    store->wait({"connected/0", "connected/1"});
    std::_Exit(0);  // gone at once, no goodbye
  }
  brasa::Tensor t = brasa::ones({1024});
  const auto t0 = std::chrono::steady_clock::now();
  try {
    dist::all_reduce(t);
    std::printf("rank %d: allreduce succeeded without rank 2\n", rank);
    return 1;
  } catch (const dist::DistError& e) {
    const std::string what = e.what();
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Rank 2 among the ranks named as missing (a slow survivor may be named too).
    const auto at = what.find("did not reach it");
    const auto list = what.rfind("rank(s) ", at);
    const bool named = at != std::string::npos && list != std::string::npos &&
                       what.substr(list, at - list).find('2') != std::string::npos;
    std::printf("rank %d: failed after %.1f s: %s\n", rank, waited, what.c_str());
    if (!named || waited > 15) return 1;
  }
  // Rank 0 serves the store the others still use to diagnose: it leaves last.
  if (store->add("diagnosed", 1) == 2) store->set("all_diagnosed", "1");
  if (rank == 0) store->wait({"all_diagnosed"});
  std::printf("rank %d: ok\n", rank);
  return 0;
}
