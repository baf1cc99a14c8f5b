#pragma once
// Which backend the process-group tests run on (BRASA_TEST_BACKEND, default
// mpi), and the one rendezvous the gloo runs share.

#include <brasa/comm/distributed.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>

namespace brasa::distributed::testing {

inline std::string backend() {
  const char* b = std::getenv("BRASA_TEST_BACKEND");
  return b ? b : "mpi";
}

inline bool& shared_rendezvous_made() {
  static bool made = false;
  return made;
}

// env:// under brasarun; under mpirun without MASTER_ADDR, through MPI.
inline const Rendezvous& shared_rendezvous() {
  static Rendezvous r = [] {
    shared_rendezvous_made() = true;
    return rendezvous("env://", -1, -1, std::chrono::seconds(60));
  }();
  return r;
}

// Rank 0 serves the shared store: at the end of the program it waits until
// every other rank is done with it.
class LeaveTogether : public ::testing::Environment {
 public:
  void TearDown() override {
    if (!shared_rendezvous_made()) return;
    const Rendezvous& r = shared_rendezvous();
    if (r.rank != 0) {
      r.store->add("departed", 1);
      return;
    }
    while (r.store->add("departed", 0) < r.world_size - 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
};

}  // namespace brasa::distributed::testing
