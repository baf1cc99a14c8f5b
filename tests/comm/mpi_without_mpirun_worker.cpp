// One worker of a brasarun job that asks for the mpi backend: without
// mpirun each worker is an MPI world of one, which must be an error that
// says what to do (not a job of independent size-1 "worlds" that reports
// success). Exits 0 when the error came and said so.
#include <brasa/comm/distributed.h>
#include <brasa/util/error.h>

#include <cstdio>
#include <string>

int main() {
  try {
    brasa::distributed::init_process_group("mpi");
  } catch (const brasa::Error& e) {
    const std::string m = e.message();
    const bool ok = m.find("WORLD_SIZE=2") != std::string::npos &&
                    m.find("MPI sees a world of 1") != std::string::npos &&
                    m.find("mpirun -np 2") != std::string::npos;
    if (!ok) std::fprintf(stderr, "unexpected message: %s\n", m.c_str());
    return ok ? 0 : 1;
  }
  std::fprintf(stderr, "init_process_group(\"mpi\") under brasarun without mpirun succeeded\n");
  return 1;
}
