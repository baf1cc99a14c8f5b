#pragma once
// ProcessGroupMPI's machinery, shared by mpi_group.cpp (group state, progress
// thread, fingerprint exchange) and process_group_mpi.cpp (the operations).
// Internal to brasa_comm.

#include <brasa/comm/mpi/process_group_mpi.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "mpi_runtime.h"

namespace brasa::distributed {

class MPIWork;

struct ProcessGroupMPI::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm check_comm = MPI_COMM_NULL;  // fingerprints travel apart from user messages
  bool check_collectives = true;
  bool background_collectives = false;
  int rank = 0, size = 1;
  std::mutex exec_mu;  // collectives start one at a time

  std::mutex test_mu;  // a request is tested by one thread at a time
  std::atomic<bool> broken{false};
  std::string broken_reason;

  std::mutex pending_mu;
  std::condition_variable pending_cv;
  std::deque<std::shared_ptr<MPIWork>> pending;
  bool stop = false;
  std::thread progress;

  void start_progress_thread();
  void stop_progress_thread();
  void progress_loop();
  void break_group(const std::string& reason) {
    std::lock_guard<std::mutex> lock(pending_mu);
    if (!broken.exchange(true)) broken_reason = reason;
  }
};

namespace mpi_detail {

// Starts an operation: checks the group, compares fingerprints (collectives
// only), then runs `launch` — with null, the blocking MPI call; otherwise it
// posts nonblocking calls whose requests a progress thread completes.
// on_done puts the results in place (copy back, AVG's division).
std::shared_ptr<Work> start(ProcessGroupMPI::Impl& g, const char* op,
                            const Fingerprint* fingerprint, std::chrono::milliseconds timeout,
                            const std::function<void(std::vector<MPI_Request>*)>& launch,
                            std::function<void(const std::vector<MPI_Status>&)> on_done,
                            std::vector<Tensor> keep_alive, std::vector<Tensor> outputs,
                            bool record_source = false);

}  // namespace mpi_detail
}  // namespace brasa::distributed
