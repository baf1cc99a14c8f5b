#include "output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace brasarun {

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // a closed console must not stop the job
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

namespace {

// What a terminal would show of a line: progress bars redraw themselves with
// '\r', and only their last state is worth a line of its own.
std::string_view visible(std::string_view line) {
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t cr = line.rfind('\r');
  return cr == std::string_view::npos ? line : line.substr(cr + 1);
}

}  // namespace

void LineSplitter::feed(std::string_view data, const std::function<void(std::string_view)>& emit) {
  while (!data.empty()) {
    size_t nl = data.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(data);
      while (partial_.size() >= kMaxLine) {
        emit(std::string_view(partial_).substr(0, kMaxLine));
        partial_.erase(0, kMaxLine);
      }
      return;
    }
    if (partial_.empty()) {
      emit(visible(data.substr(0, nl)));
    } else {
      partial_.append(data.substr(0, nl));
      emit(visible(partial_));
      partial_.clear();
    }
    data.remove_prefix(nl + 1);
  }
}

void LineSplitter::finish(const std::function<void(std::string_view)>& emit) {
  if (!partial_.empty()) emit(visible(partial_));
  partial_.clear();
}

namespace {

// mkdir -p
bool make_dirs(const std::string& path) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

int open_log(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

}  // namespace

Output::Output(const Options& options) : options_(options) {
  if (options_.log_dir.empty()) return;
  if (!make_dirs(options_.log_dir))
    throw UsageError("brasarun: cannot create --log-dir '" + options_.log_dir +
                     "': " + std::strerror(errno));
  std::string path = options_.log_dir + "/combined.log";
  combined_fd_ = open_log(path);
  if (combined_fd_ < 0)
    throw UsageError("brasarun: cannot open '" + path + "': " + std::strerror(errno));
}

Output::~Output() {
  if (combined_fd_ >= 0) ::close(combined_fd_);
  for (auto& [rank, fd] : rank_fds_)
    if (fd >= 0) ::close(fd);
}

int Output::rank_fd(int rank) {
  auto it = rank_fds_.find(rank);
  if (it != rank_fds_.end()) return it->second;
  int fd = open_log(options_.log_dir + "/rank_" + std::to_string(rank) + ".log");
  if (fd < 0)
    error("cannot open the log of rank " + std::to_string(rank) + ": " + std::strerror(errno));
  rank_fds_[rank] = fd;
  return fd;
}

void Output::to_combined(std::string_view text) {
  if (combined_fd_ >= 0) write_all(combined_fd_, text);
}

void Output::worker_line(int rank, bool is_stderr, std::string_view line) {
  std::string prefixed = "[rank " + std::to_string(rank) + "] ";
  prefixed.append(line);
  prefixed.push_back('\n');
  int stream = is_stderr ? kStderr : kStdout;
  if (!(options_.redirect & stream)) write_all(is_stderr ? STDERR_FILENO : STDOUT_FILENO, prefixed);
  if (combined_fd_ >= 0 && ((options_.tee | options_.redirect) & stream)) {
    to_combined(prefixed);
    int fd = rank_fd(rank);
    if (fd >= 0) {
      std::string plain(line);
      plain.push_back('\n');
      write_all(fd, plain);
    }
  }
}

void Output::notice(std::string_view text) {
  std::string line = "brasarun: " + std::string(text) + "\n";
  if (!options_.quiet) write_all(STDERR_FILENO, line);
  to_combined(line);
}

void Output::error(std::string_view text) {
  std::string line = "brasarun: " + std::string(text);
  if (line.back() != '\n') line.push_back('\n');
  write_all(STDERR_FILENO, line);
  to_combined(line);
}

}  // namespace brasarun
