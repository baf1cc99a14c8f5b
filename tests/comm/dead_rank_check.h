#pragma once
// The shared end of the dead-rank tests: rank 2 of 3 is gone, ranks 0 and 1
// ran an operation that must fail naming it within the timeout.
#include <brasa/comm/store/store.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>

namespace brasa::distributed::testing {

// Runs `op` (which must fail); returns the exit code of the rank: 0 when it
// failed within 15 s with an error naming rank 2 as missing. Rank 0 serves
// the store the others still use to diagnose, so it leaves last.
inline int expect_rank_2_named(int rank, const std::shared_ptr<Store>& store, const char* what_op,
                               const std::function<void()>& op) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    op();
    std::printf("rank %d: %s succeeded without rank 2\n", rank, what_op);
    return 1;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Rank 2 among the ranks named as missing (a slow survivor may be named too).
    const auto at = what.find("did not reach it");
    const auto list = what.rfind("rank(s) ", at);
    const bool named = at != std::string::npos && list != std::string::npos &&
                       what.substr(list, at - list).find('2') != std::string::npos;
    std::printf("rank %d: %s failed after %.1f s: %s\n", rank, what_op, waited, what.c_str());
    if (!named || waited > 15) return 1;
  }
  if (store->add("diagnosed", 1) == 2) store->set("all_diagnosed", "1");
  // Not the store's own timeout (the group's short one): under a loaded CI
  // the other survivor may diagnose seconds after this one.
  if (rank == 0) store->wait({"all_diagnosed"}, std::chrono::seconds(30));
  std::printf("rank %d: ok\n", rank);
  return 0;
}

}  // namespace brasa::distributed::testing
