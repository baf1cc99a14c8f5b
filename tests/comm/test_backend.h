#pragma once
// Which backend the process-group tests run on (BRASA_TEST_BACKEND, default
// mpi), and the one rendezvous the gloo runs share.

#include <brasa/comm/distributed.h>

#include <cstdlib>
#include <string>

namespace brasa::distributed::testing {

inline std::string backend() {
  const char* b = std::getenv("BRASA_TEST_BACKEND");
  return b ? b : "mpi";
}

// env:// under brasarun; under mpirun without MASTER_ADDR, through MPI.
inline const Rendezvous& shared_rendezvous() {
  static Rendezvous r = rendezvous("env://", -1, -1, std::chrono::seconds(60));
  return r;
}

}  // namespace brasa::distributed::testing
