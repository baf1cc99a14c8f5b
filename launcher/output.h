#pragma once
// Where worker output and brasarun's own messages go: the console, and with
// --log-dir one file per rank plus a combined log.

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "options.h"

namespace brasarun {

// Writes all of `data` to `fd`, retrying on EINTR and short writes.
void write_all(int fd, std::string_view data);

// Cuts a byte stream into lines. A line longer than kMaxLine is cut there,
// so one worker cannot make brasarun hold unbounded memory. Of a line that
// redraws itself with '\r' (a progress bar) only the last state is kept.
class LineSplitter {
 public:
  static constexpr size_t kMaxLine = 64 * 1024;
  // Calls `emit` for every complete line (without its '\n').
  void feed(std::string_view data, const std::function<void(std::string_view)>& emit);
  // Emits what is left as a last line, if anything.
  void finish(const std::function<void(std::string_view)>& emit);

 private:
  std::string partial_;
};

class Output {
 public:
  // Creates the log directory when one is given; throws UsageError if it
  // cannot be created.
  explicit Output(const Options& options);
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  // One line of a worker's output, `line` without its newline. Each
  // destination receives the whole line with a single write, so lines of
  // different workers never interleave.
  void worker_line(int rank, bool is_stderr, std::string_view line);
  // brasarun's own messages, prefixed "brasarun: ", to stderr and the
  // combined log; notices are dropped with --quiet, errors never.
  void notice(std::string_view text);
  void error(std::string_view text);

 private:
  int rank_fd(int rank);
  void to_combined(std::string_view text);

  const Options& options_;
  int combined_fd_ = -1;
  std::map<int, int> rank_fds_;
};

}  // namespace brasarun
