// One rank of a gloo (or argv[1]: shm) job whose rank 2 dies (with exit code 0, so that
// brasarun lets the others go on) right after the group is set up. Ranks 0
// and 1 must then fail their allreduce within the timeout, naming rank 2.
// Exits non-zero when they do not.

#include <brasa/comm/distributed.h>
#include <brasa/ops/factory.h>

#include "dead_rank_check.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dist = brasa::distributed;

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  // A timeout far beyond what the check allows (15 s): the dead rank must be
  // reported as soon as it is known, not when the survivors' timeout passes.
  dist::init_process_group(argc > 1 ? argv[1] : "gloo", "env://", -1, -1, 60s);
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
  return dist::testing::expect_rank_2_named(rank, store, "allreduce", [&] { dist::all_reduce(t); });
}
