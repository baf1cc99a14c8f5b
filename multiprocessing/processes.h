#pragma once
// Processes running one function (torch.multiprocessing.spawn /
// start_processes), with the fork start method: each child runs fn(rank)
// and exits; the parent's join() returns when all have exited and throws on
// the first failure — naming the child's rank and its exception message, its
// exit code or the signal that killed it — after stopping the others
// (SIGTERM, then SIGKILL). Children die with the parent (PR_SET_PDEATHSIG).
//
//   mp::spawn([&](int rank) { train(rank); }, /*nprocs=*/2);   // joins
//   auto ctx = mp::start_processes(fn, 2, mp::ProcessOptions().join(false));
//   ...feed a queue...
//   ctx.join();
//
// Brasa's thread pool is fork-safe: a child starts single-threaded and may
// use the pool.
//
// The spawn start method re-executes the program (a fresh process: what CUDA
// needs, which does not survive fork) and runs a function registered under a
// name; the child learns which from its environment, so main() must let it
// through first:
//
//   static mp::Entry train_entry("train", [](int rank) { train(rank); });
//   int main() {
//     mp::spawn_main();              // in a spawned child: runs its entry, exits
//     ...
//     mp::spawn("train", 2);         // start method "spawn"; joins
//   }
//
// A spawned child shares no memory with its parent: it gets its rank, the
// environment and the files (init_process_group's env:// rendezvous works),
// and the queues the parent names — PyTorch's spawn(fn, args=(q,)):
//
//   mp::Queue q;                                   // in the parent
//   mp::start_processes("train", 2, mp::ProcessOptions().start_method("spawn")
//                                       .queues({&q}).join(false));
//   static mp::Entry e("train", [](int rank) {
//     mp::Queue& q = mp::inherited_queue(0);       // the parent's q, in either start method
//     ...
//   });

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace brasa::multiprocessing {

class Queue;

// A child failed: its rank, its pid, and what happened.
class ProcessException : public std::runtime_error {
 public:
  ProcessException(const std::string& what, int error_index, pid_t pid)
      : std::runtime_error(what), error_index(error_index), pid(pid) {}
  int error_index;
  pid_t pid;
};
// The child's function threw; message is its what().
class ProcessRaisedException : public ProcessException {
 public:
  using ProcessException::ProcessException;
};
// The child exited with a non-zero code, or died of a signal (exit_code is
// then minus the signal number, as in Python).
class ProcessExitedException : public ProcessException {
 public:
  ProcessExitedException(const std::string& what, int error_index, pid_t pid, int exit_code,
                         std::string signal_name)
      : ProcessException(what, error_index, pid),
        exit_code(exit_code),
        signal_name(std::move(signal_name)) {}
  int exit_code;
  std::string signal_name;
};

struct ProcessOptions {
  // start_processes joins before it returns (spawn always does).
  ProcessOptions& join(bool v) {
    join_ = v;
    return *this;
  }
  // "fork" (the default) or "spawn" (a registered Entry only).
  ProcessOptions& start_method(std::string v) {
    start_method_ = std::move(v);
    return *this;
  }
  // How long stopped siblings get between SIGTERM and SIGKILL.
  ProcessOptions& grace_period(std::chrono::milliseconds v) {
    grace_period_ = v;
    return *this;
  }
  // Queues the children reach as inherited_queue(0), inherited_queue(1), …
  // (a spawned child gets their descriptors). They must outlive the children.
  ProcessOptions& queues(std::vector<Queue*> v) {
    queues_ = std::move(v);
    return *this;
  }
  bool join_ = true;
  std::string start_method_ = "fork";
  std::vector<Queue*> queues_;
  std::chrono::milliseconds grace_period_{3000};
};

class ProcessContext {
 public:
  ProcessContext() = default;
  // Waits for the children (all of them, or until the timeout passes).
  // Returns true when all exited successfully, false on timeout; throws the
  // first failure (after stopping the others).
  bool join(std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  std::vector<pid_t> pids() const;
  // ctx->join() reads like PyTorch's context object.
  ProcessContext* operator->() { return this; }

  struct State;

 private:
  friend class ProcessLauncher;
  std::shared_ptr<State> state_;
};

ProcessContext start_processes(std::function<void(int)> fn, int nprocs = 1,
                               const ProcessOptions& options = {});
// Starts nprocs children and joins them.
void spawn(std::function<void(int)> fn, int nprocs = 1);

// A function the spawn start method can run, by name. Define it at namespace
// scope (a static object), so that the re-executed program has it before
// main() runs.
class Entry {
 public:
  Entry(const std::string& name, std::function<void(int)> fn);
};
// Runs the registered entry `entry` in nprocs children — with
// options.start_method("spawn"), in re-executed copies of the program; with
// "fork", in forked ones.
ProcessContext start_processes(const std::string& entry, int nprocs = 1,
                               const ProcessOptions& options = {});
// start_processes(entry, nprocs) with the spawn start method, joined.
void spawn(const std::string& entry, int nprocs = 1);
// First thing in main(): in a child of the spawn start method, runs its entry
// and exits (the exit code and any exception go to the parent); otherwise
// returns at once.
void spawn_main();
// In a child: the index-th of the queues its parent passed with
// ProcessOptions().queues({...}). Throws when there is no such queue.
Queue& inherited_queue(size_t index);

namespace detail {
// A child started by this process that has failed (non-zero exit, or a
// signal) and is not yet joined, described — what Queue.get reports instead
// of waiting forever for a message it will never send.
std::optional<std::string> peer_failure();
}  // namespace detail

}  // namespace brasa::multiprocessing
