// One rank of a 2-rank mpirun job in which rank 1 fails (returns 3) right
// after init while rank 0 waits in an allreduce with the default 30-minute
// timeout: the job must fail at once (mpi_early_exit.sh checks how fast).
#include <brasa/comm/distributed.h>
#include <brasa/ops/factory.h>

int main() {
  namespace dist = brasa::distributed;
  dist::init_process_group("mpi");
  if (dist::get_rank() == 1) return 3;  // an error, reported and returned
  brasa::Tensor t = brasa::ones({4});
  dist::all_reduce(t);  // never completes: rank 1 is gone
  return 0;
}
