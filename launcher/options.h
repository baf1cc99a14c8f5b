#pragma once
// brasarun's command line.

#include <stdexcept>
#include <string>
#include <vector>

namespace brasarun {

// Which worker streams go to the per-rank log files (--tee) or only there
// (--redirect). Bits as torchrun numbers them: 1 stdout, 2 stderr, 3 both.
enum Streams : int { kNoStreams = 0, kStdout = 1, kStderr = 2, kBothStreams = 3 };

struct Options {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0: pick a free port (node 0 only)
  int max_restarts = 0;
  std::string log_dir;               // empty: no log files
  int tee = kNoStreams;              // streams copied to the log files and the console
  int redirect = kNoStreams;         // streams sent to the log files only
  std::string run_id;                // empty: node 0 makes one up
  double monitor_interval = 0.1;     // seconds between checks of the workers
  double timeout_grace = 5.0;        // seconds between SIGTERM and SIGKILL
  double rdzv_timeout = 300.0;       // seconds to wait for all nodes to join
  bool quiet = false;                // no notices from brasarun itself
  std::vector<std::string> command;  // program and its arguments
};

// A bad command line; main prints the message and exits with code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses argv. Returns false when --help was asked for (the usage text has
// then been printed). Throws UsageError on anything it does not accept.
bool parse_options(int argc, char** argv, Options& out);

const char* usage_text();

}  // namespace brasarun
