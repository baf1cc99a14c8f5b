#pragma once
// The workers of one node: starting them, carrying their output, noticing
// their exit, stopping them.

#include <poll.h>
#include <sys/types.h>

#include <deque>
#include <string>
#include <vector>

#include "options.h"
#include "output.h"

namespace brasarun {

// This node's part of one attempt, as decided at the rendezvous.
struct Assignment {
  int attempt = 0;    // restarts before this attempt
  int rank_base = 0;  // global rank of local rank 0
  int world_size = 1;
  int group_world_size = 1;  // nodes
  int master_port = 0;       // MASTER_PORT for the workers
  std::string run_id;
};

struct Worker {
  int local_rank = 0;
  int rank = 0;
  pid_t pid = -1;
  bool reaped = false;
  bool stopped_by_us = false;  // got our SIGTERM/SIGKILL before it exited
  int exit_code = 0;           // when it exited
  int signal = 0;              // when a signal killed it
  double reaped_at = 0;
  int fds[2] = {-1, -1};  // stdout (a pty, or a pipe), stderr (a pipe)
  LineSplitter splitters[2];
  std::deque<std::string> tail;  // its last lines, both streams
  std::string error_file;

  bool failed() const { return reaped && (exit_code != 0 || signal != 0); }
  // "exited with code 3", "was killed by signal SIGSEGV (Segmentation fault)"
  std::string describe_exit() const;
};

class WorkerGroup {
 public:
  static constexpr size_t kTailLines = 20;

  // `program` is the resolved path of options.command[0]; `error_dir` holds
  // the BRASA_ERROR_FILE of each worker. A temporary `error_dir` (brasarun's
  // own, not a --log-dir) is removed by the workers' guardians when brasarun
  // is killed and cannot remove it itself.
  WorkerGroup(const Options& options, Output& output, std::string program, std::string error_dir,
              bool error_dir_is_temporary);
  ~WorkerGroup();

  void start(const Assignment& assignment);

  // Waits up to `timeout_s` for output, a child's exit or activity on the
  // `extra` descriptors (their revents are filled in), then forwards output
  // and reaps exited workers.
  void poll(double timeout_s, std::vector<pollfd>& extra);

  // The first worker seen failing in this attempt, or null.
  const Worker* first_failure() const {
    return first_failure_ < 0 ? nullptr : &workers_[first_failure_];
  }
  // Every worker exited with 0 and all their output has been forwarded.
  bool all_succeeded() const;
  bool any_running() const;

  void signal_all(int sig);
  // Sends `sig` to the workers still running, waits up to the grace period,
  // SIGKILLs what is left (with its process group), and forwards the output
  // that remains.
  void stop(int sig);

  // What a failed worker left behind: its error file and its last lines.
  std::string failure_report(const Worker& w) const;

 private:
  void spawn(Worker& w, const std::vector<std::string>& env);
  void read_from(Worker& w, int stream);
  void close_stream(Worker& w, int stream);
  void reap();
  void close_all_streams();

  const Options& options_;
  Output& output_;
  std::string program_;
  std::string error_dir_;
  bool error_dir_is_temporary_;
  Assignment assignment_;
  std::vector<Worker> workers_;
  int first_failure_ = -1;
};

// Current time in seconds (monotonic clock).
double now_seconds();

}  // namespace brasarun
