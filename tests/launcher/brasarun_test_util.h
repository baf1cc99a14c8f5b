#pragma once
// What the brasarun tests share (brasarun_test.cpp: one node;
// brasarun_nodes_test.cpp: several nodes and the rendezvous): the
// launcher and worker paths, a child process with its output, temporary
// directories and the readers of what the workers leave.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace brasarun_test {

inline const std::string kBrasarun = BRASARUN_PATH;
inline const std::string kWorker = TEST_WORKER_PATH;

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Result {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out, err;
  double seconds = 0;
};

// A child process with its stdout and stderr captured.
class Process {
 public:
  explicit Process(
      const std::vector<std::string>& argv,
      const std::vector<std::pair<std::string, std::optional<std::string>>>& env = {}) {
    int out[2], err[2];
    EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    start_ = now();
    pid_ = fork();
    if (pid_ == 0) {
      for (const auto& [k, v] : env) v ? setenv(k.c_str(), v->c_str(), 1) : unsetenv(k.c_str());
      dup2(out[1], 1);
      dup2(err[1], 2);
      execv(args[0], args.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    fds_[0] = out[0];
    fds_[1] = err[0];
  }
  ~Process() {
    if (!done_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    for (int fd : fds_)
      if (fd >= 0) close(fd);
  }

  pid_t pid() const { return pid_; }
  const std::string& out() const { return text_[0]; }
  const std::string& err() const { return text_[1]; }

  // Reads output until `until` holds or `timeout` seconds pass; false on timeout.
  bool read_until(const std::function<bool()>& until, double timeout) {
    const double deadline = now() + timeout;
    while (!until()) {
      if (now() > deadline || (fds_[0] < 0 && fds_[1] < 0)) return until();
      pump(0.05);
    }
    return true;
  }

  // Reads everything, then waits for the exit. A process still running after
  // `timeout` seconds is killed and the test fails.
  Result finish(double timeout = 60) {
    const double deadline = now() + timeout;
    while ((fds_[0] >= 0 || fds_[1] >= 0) && now() < deadline) pump(0.05);
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (now() > deadline) {
        ADD_FAILURE() << "brasarun did not exit within " << timeout << " s";
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    done_ = true;
    Result r;
    r.seconds = now() - start_;
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    r.out = text_[0];
    r.err = text_[1];
    return r;
  }

 private:
  void pump(double timeout) {
    pollfd p[2];
    int n = 0;
    int which[2];
    for (int s = 0; s < 2; ++s)
      if (fds_[s] >= 0) {
        p[n] = {fds_[s], POLLIN, 0};
        which[n++] = s;
      }
    if (n == 0) return;
    poll(p, n, static_cast<int>(timeout * 1000));
    for (int k = 0; k < n; ++k) {
      if (!p[k].revents) continue;
      char buf[8192];
      ssize_t got = read(fds_[which[k]], buf, sizeof buf);
      if (got > 0) {
        text_[which[k]].append(buf, static_cast<size_t>(got));
      } else {
        close(fds_[which[k]]);
        fds_[which[k]] = -1;
      }
    }
  }

  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};
  std::string text_[2];
  double start_ = 0;
  bool done_ = false;
};

inline std::vector<std::string> brasarun(std::vector<std::string> options,
                                         std::vector<std::string> worker_args) {
  std::vector<std::string> argv{kBrasarun};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(kWorker);
  argv.insert(argv.end(), worker_args.begin(), worker_args.end());
  return argv;
}

inline Result run(std::vector<std::string> options, std::vector<std::string> worker_args,
                  const std::vector<std::pair<std::string, std::optional<std::string>>>& env = {}) {
  Process p(brasarun(std::move(options), std::move(worker_args)), env);
  return p.finish();
}

struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "brasarun-test-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

inline std::map<std::string, std::string> read_vars(const std::string& path) {
  std::map<std::string, std::string> vars;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return vars;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

inline size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

inline bool wait_for_files(const std::vector<std::string>& paths, double timeout) {
  const double deadline = now() + timeout;
  for (;;) {
    bool all = true;
    for (const auto& p : paths) all = all && fs::exists(p);
    if (all) return true;
    if (now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

inline pid_t read_pid(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = -1;
  in >> pid;
  return pid;
}

}  // namespace brasarun_test
