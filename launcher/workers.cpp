#include "workers.h"

#include <brasa/util/launch_env.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "net.h"
#include "signals.h"

extern char** environ;

namespace brasarun {

namespace launch = brasa::launch;

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string Worker::describe_exit() const {
  if (signal != 0) return "was killed by signal " + signal_name(signal);
  return "exited with code " + std::to_string(exit_code);
}

namespace {

// A pseudo-terminal for a worker's stdout: C and C++ runtimes line-buffer a
// terminal, so lines arrive as they are printed, not when a 4 KiB buffer
// fills or the process exits. Output processing is switched off so the bytes
// arrive unchanged ("\n" is not turned into "\r\n").
bool open_pty(int* master_out, int* slave_out) {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0) return false;
  char name[128];
  int slave = -1;
  if (::grantpt(master) == 0 && ::unlockpt(master) == 0 &&
      ::ptsname_r(master, name, sizeof name) == 0)
    slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) {
    ::close(master);
    return false;
  }
  termios t{};
  if (::tcgetattr(slave, &t) == 0) {
    t.c_oflag &= ~static_cast<tcflag_t>(OPOST);
    t.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON | ISIG | IEXTEN);
    ::tcsetattr(slave, TCSANOW, &t);
  }
  ::fcntl(master, F_SETFD, FD_CLOEXEC);
  *master_out = master;
  *slave_out = slave;
  return true;
}

void make_pipe(int* read_end, int* write_end) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("brasarun: pipe2: ") + std::strerror(errno));
  *read_end = p[0];
  *write_end = p[1];
}

std::vector<std::string> worker_environment(const Options& o, const Assignment& a, int local_rank,
                                            const std::string& error_file) {
  const std::pair<const char*, std::string> vars[] = {
      {launch::kRank, std::to_string(a.rank_base + local_rank)},
      {launch::kLocalRank, std::to_string(local_rank)},
      {launch::kWorldSize, std::to_string(a.world_size)},
      {launch::kLocalWorldSize, std::to_string(o.nproc_per_node)},
      {launch::kGroupRank, std::to_string(o.node_rank)},
      {launch::kGroupWorldSize, std::to_string(a.group_world_size)},
      {launch::kMasterAddr, o.master_addr},
      {launch::kMasterPort, std::to_string(a.master_port)},
      {launch::kRestartCount, std::to_string(a.attempt)},
      {launch::kMaxRestarts, std::to_string(o.max_restarts)},
      {launch::kRunId, a.run_id},
      {launch::kErrorFile, error_file},
  };
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    std::string_view key = entry.substr(0, entry.find('='));
    bool replaced = std::any_of(std::begin(vars), std::end(vars),
                                [&](const auto& v) { return key == v.first; });
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [key, value] : vars) env.push_back(std::string(key) + "=" + value);
  // The job's store then admits its own workers only (on every node: the
  // nodes of a multi-node job share BRASA_JOB_TOKEN).
  if (!std::getenv("BRASA_STORE_TOKEN")) env.push_back("BRASA_STORE_TOKEN=" + job_token());
  return env;
}

}  // namespace

WorkerGroup::WorkerGroup(const Options& options, Output& output, std::string program,
                         std::string error_dir, bool error_dir_is_temporary)
    : options_(options),
      output_(output),
      program_(std::move(program)),
      error_dir_(std::move(error_dir)),
      error_dir_is_temporary_(error_dir_is_temporary) {}

WorkerGroup::~WorkerGroup() {
  if (any_running()) stop(SIGKILL);
  close_all_streams();
}

void WorkerGroup::start(const Assignment& assignment) {
  close_all_streams();
  assignment_ = assignment;
  first_failure_ = -1;
  workers_.clear();
  workers_.resize(static_cast<size_t>(options_.nproc_per_node));
  for (int i = 0; i < options_.nproc_per_node; ++i) {
    Worker& w = workers_[static_cast<size_t>(i)];
    w.local_rank = i;
    w.rank = assignment.rank_base + i;
    w.error_file = error_dir_ + "/error_rank_" + std::to_string(w.rank) + ".txt";
    ::unlink(w.error_file.c_str());  // left over from an earlier attempt
    spawn(w, worker_environment(options_, assignment, i, w.error_file));
  }
}

namespace {

// ---- the guardian ----
// Each worker runs under a small guardian process (the process brasarun
// knows as the worker's pid and group): if brasarun is killed, even by
// SIGKILL, the guardian learns it (parent-death signal) and kills everything
// the worker started, including processes that left its group, as long as
// they are its descendants (it is a subreaper, so orphans become its
// children). Otherwise it only waits for the worker and exits as the worker
// did. It runs between fork and exec of a possibly multi-threaded brasarun,
// so it makes async-signal-safe calls only (no allocation).

constexpr int kParentDied = SIGUSR2;

// pid's parent and process group from /proc/<pid>/stat; false when gone.
bool parent_and_group(pid_t pid, pid_t* ppid, pid_t* pgrp) {
  char path[64] = "/proc/";
  char digits[24];
  int n = 0;
  for (pid_t v = pid; v > 0; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
  int at = 6;
  while (n > 0) path[at++] = digits[--n];
  const char* tail = "/stat";
  for (int i = 0; tail[i]; ++i) path[at++] = tail[i];
  path[at] = 0;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t len = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (len <= 0) return false;
  buf[len] = 0;
  const char* p = nullptr;  // after the last ')': " S ppid pgrp ..."
  for (ssize_t i = len - 1; i >= 0 && !p; --i)
    if (buf[i] == ')') p = buf + i + 1;
  if (!p) return false;
  long fields[2] = {0, 0};
  int field = -2;  // the fields after ")": -1 the state letter, 0 ppid, 1 pgrp
  for (; *p && field < 2; ++p) {
    if (*p == ' ') {
      ++field;
      continue;
    }
    if (field >= 0 && *p >= '0' && *p <= '9') fields[field] = fields[field] * 10 + (*p - '0');
  }
  *ppid = static_cast<pid_t>(fields[0]);
  *pgrp = static_cast<pid_t>(fields[1]);
  return true;
}

// Kills the processes whose parent is this one (orphans adopted by the
// subreaper included) together with their groups; returns how many it found.
int kill_children_and_their_groups() {
  const pid_t self = ::getpid();
  const int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  int found = 0;
  alignas(8) char buf[8192];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      struct Entry {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
      };
      const auto* e = reinterpret_cast<const Entry*>(buf + off);
      off += e->reclen;
      pid_t pid = 0;
      const char* c = e->name;
      for (; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
      if (*c != 0 || pid <= 0 || pid == self) continue;
      pid_t ppid = 0, pgrp = 0;
      if (!parent_and_group(pid, &ppid, &pgrp) || ppid != self) continue;
      ++found;
      if (pgrp != ::getpgrp() && pgrp > 1) ::kill(-pgrp, SIGKILL);
      ::kill(pid, SIGKILL);
    }
  }
  ::close(dir);
  return found;
}

// What a guardian removes when brasarun is gone: its worker's error file and
// brasarun's temporary directory (the last guardian to try finds it empty).
// Null when the directory is the user's --log-dir.
struct LeftBehind {
  const char* error_file = nullptr;
  const char* temp_dir = nullptr;
};

// brasarun is gone: nothing the worker started may outlive it, nor the
// temporary directory it could not remove.
[[noreturn]] void kill_everything_and_die(const LeftBehind& left) {
  for (int round = 0; round < 50; ++round) {
    const int found = kill_children_and_their_groups();
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (found == 0) break;
    struct timespec pause = {0, 10 * 1000 * 1000};
    ::nanosleep(&pause, nullptr);
  }
  if (left.temp_dir) {
    ::unlink(left.error_file);
    ::rmdir(left.temp_dir);  // fails while another rank's file is still there
  }
  ::kill(0, SIGKILL);  // whatever is left of the group, and this process
  ::_exit(137);
}

// Waits for the worker and leaves as it did (its exit code, or its signal).
[[noreturn]] void guard(pid_t worker, const sigset_t& waited, const LeftBehind& left) {
  for (;;) {
    siginfo_t info;
    const int sig = ::sigwaitinfo(&waited, &info);
    if (sig == kParentDied) kill_everything_and_die(left);
    if (sig != SIGCHLD) continue;  // signals for the worker reach it through the group
    int status = 0;
    pid_t r;
    while ((r = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (r != worker) continue;  // an adopted orphan: reaped
      if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
      const int s = WTERMSIG(status);
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      sigemptyset(&dfl.sa_mask);
      ::sigaction(s, &dfl, nullptr);
      sigset_t only;
      sigemptyset(&only);
      sigaddset(&only, s);
      ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
      ::kill(::getpid(), s);
      ::_exit(128 + s);
    }
  }
}

}  // namespace

void WorkerGroup::spawn(Worker& w, const std::vector<std::string>& env) {
  // Everything the child needs is prepared here: between fork and exec it
  // only makes async-signal-safe calls.
  std::vector<char*> argv, envp;
  for (const auto& a : options_.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string exec_failed = "brasarun: cannot execute '" + program_ + "': ";
  LeftBehind left;
  if (error_dir_is_temporary_) left = {w.error_file.c_str(), error_dir_.c_str()};

  int out_read = -1, out_write = -1, err_read = -1, err_write = -1;
  if (!open_pty(&out_read, &out_write)) make_pipe(&out_read, &out_write);
  make_pipe(&err_read, &err_write);
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();

  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("brasarun: fork: ") + std::strerror(errno));
  if (pid == 0) {     // the guardian
    ::setpgid(0, 0);  // its own group, so stopping it reaches the worker and its children too
    ::prctl(PR_SET_PDEATHSIG, kParentDied);  // told when brasarun dies, even by SIGKILL
    if (::getppid() != parent) ::_exit(1);   // brasarun died before prctl
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);      // the worker's orphans become its children
    // Signals sent to the group are for the worker; the guardian waits on these.
    sigset_t waited;
    sigemptyset(&waited);
    for (int sig : {SIGCHLD, kParentDied, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGPIPE})
      sigaddset(&waited, sig);
    ::sigprocmask(SIG_BLOCK, &waited, nullptr);
    const pid_t guardian = ::getpid();
    const pid_t worker = ::fork();
    if (worker < 0) ::_exit(127);
    if (worker == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with its guardian, even on SIGKILL
      if (::getppid() != guardian) ::_exit(1);
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      sigemptyset(&dfl.sa_mask);
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGUSR2})
        ::sigaction(sig, &dfl, nullptr);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
      ::dup2(out_write, STDOUT_FILENO);
      ::dup2(err_write, STDERR_FILENO);
      ::execve(program_.c_str(), argv.data(), envp.data());
      const char* reason = ::strerror(errno);
      (void)!::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
      (void)!::write(STDERR_FILENO, reason, std::strlen(reason));
      (void)!::write(STDERR_FILENO, "\n", 1);
      ::_exit(127);
    }
    // The guardian keeps no end of the worker's streams: they close when the worker's do.
    ::close(out_write);
    ::close(err_write);
    ::close(out_read);
    ::close(err_read);
    if (devnull >= 0) ::close(devnull);
    guard(worker, waited, left);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we ever signal it
  ::close(out_write);
  ::close(err_write);
  if (devnull >= 0) ::close(devnull);
  for (int fd : {out_read, err_read}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  w.pid = pid;
  w.fds[0] = out_read;
  w.fds[1] = err_read;
}

void WorkerGroup::read_from(Worker& w, int stream) {
  char buf[65536];
  // A bounded number of reads, so one chatty worker cannot starve the others.
  for (int round = 0; round < 16 && w.fds[stream] >= 0; ++round) {
    ssize_t n = ::read(w.fds[stream], buf, sizeof buf);
    if (n > 0) {
      w.splitters[stream].feed(std::string_view(buf, static_cast<size_t>(n)),
                               [&](std::string_view line) {
                                 output_.worker_line(w.rank, stream == 1, line);
                                 w.tail.emplace_back(line);
                                 if (w.tail.size() > kTailLines) w.tail.pop_front();
                               });
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    close_stream(w, stream);  // end of file, or EIO: the pty's other side is closed
  }
}

void WorkerGroup::close_stream(Worker& w, int stream) {
  if (w.fds[stream] < 0) return;
  w.splitters[stream].finish([&](std::string_view line) {
    output_.worker_line(w.rank, stream == 1, line);
    w.tail.emplace_back(line);
    if (w.tail.size() > kTailLines) w.tail.pop_front();
  });
  ::close(w.fds[stream]);
  w.fds[stream] = -1;
}

void WorkerGroup::close_all_streams() {
  for (auto& w : workers_)
    for (int s = 0; s < 2; ++s) close_stream(w, s);
}

void WorkerGroup::poll(double timeout_s, std::vector<pollfd>& extra) {
  std::vector<pollfd> fds;
  fds.push_back({signal_fd(), POLLIN, 0});
  std::vector<std::pair<size_t, int>> owners;  // (worker index, stream) per fd
  for (size_t i = 0; i < workers_.size(); ++i)
    for (int s = 0; s < 2; ++s)
      if (workers_[i].fds[s] >= 0) {
        fds.push_back({workers_[i].fds[s], POLLIN, 0});
        owners.emplace_back(i, s);
      }
  const size_t first_extra = fds.size();
  for (auto& e : extra) fds.push_back({e.fd, e.events, 0});

  int timeout_ms = static_cast<int>(std::max(0.0, timeout_s) * 1000.0 + 0.5);
  int n = ::poll(fds.data(), fds.size(), timeout_ms);
  if (n > 0) {
    if (fds[0].revents) drain_signal_pipe();
    for (size_t k = 0; k < owners.size(); ++k)
      if (fds[k + 1].revents) read_from(workers_[owners[k].first], owners[k].second);
    for (size_t k = 0; k < extra.size(); ++k) extra[k].revents = fds[first_extra + k].revents;
  } else {
    for (auto& e : extra) e.revents = 0;
  }
  reap();
  // A worker's own children may keep its output open after it exited; give
  // them a second, then stop listening.
  double now = now_seconds();
  for (auto& w : workers_)
    if (w.reaped && now - w.reaped_at > 1.0)
      for (int s = 0; s < 2; ++s) close_stream(w, s);
}

void WorkerGroup::reap() {
  for (size_t i = 0; i < workers_.size(); ++i) {
    Worker& w = workers_[i];
    if (w.reaped || w.pid <= 0) continue;
    int status = 0;
    pid_t r = ::waitpid(w.pid, &status, WNOHANG);
    if (r != w.pid) continue;
    w.reaped = true;
    w.reaped_at = now_seconds();
    if (WIFEXITED(status)) w.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) w.signal = WTERMSIG(status);
    if (w.failed() && !w.stopped_by_us && first_failure_ < 0) first_failure_ = static_cast<int>(i);
  }
}

bool WorkerGroup::all_succeeded() const {
  return std::all_of(workers_.begin(), workers_.end(), [](const Worker& w) {
    return w.reaped && !w.failed() && w.fds[0] < 0 && w.fds[1] < 0;
  });
}

bool WorkerGroup::any_running() const {
  return std::any_of(workers_.begin(), workers_.end(),
                     [](const Worker& w) { return w.pid > 0 && !w.reaped; });
}

void WorkerGroup::signal_all(int sig) {
  for (auto& w : workers_)
    if (w.pid > 0 && !w.reaped) ::kill(-w.pid, sig);
}

void WorkerGroup::stop(int sig) {
  std::vector<pollfd> none;
  for (auto& w : workers_)
    if (w.pid > 0 && !w.reaped) {
      w.stopped_by_us = true;
      ::kill(-w.pid, sig);
    }
  const double deadline = now_seconds() + options_.timeout_grace;
  while (any_running() && now_seconds() < deadline)
    poll(std::min(0.05, deadline - now_seconds()), none);
  if (any_running()) {
    for (auto& w : workers_)
      if (w.pid > 0 && !w.reaped) ::kill(-w.pid, SIGKILL);
    while (any_running()) poll(0.05, none);
  }
  // Whatever the workers started in their groups goes too.
  for (auto& w : workers_)
    if (w.pid > 0) ::kill(-w.pid, SIGKILL);
  const double drain_until = now_seconds() + 1.0;
  auto streams_open = [&] {
    return std::any_of(workers_.begin(), workers_.end(),
                       [](const Worker& w) { return w.fds[0] >= 0 || w.fds[1] >= 0; });
  };
  while (streams_open() && now_seconds() < drain_until) poll(0.05, none);
  close_all_streams();
}

std::string WorkerGroup::failure_report(const Worker& w) const {
  std::string r;
  if (int fd = ::open(w.error_file.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    if (n > 0) {
      std::string text(buf, static_cast<size_t>(n));
      while (!text.empty() && text.back() == '\n') text.pop_back();
      r += "its error file says:\n";
      size_t pos = 0;
      while (pos <= text.size()) {
        size_t nl = text.find('\n', pos);
        r += "  " + text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos) + "\n";
        if (nl == std::string::npos) break;
        pos = nl + 1;
      }
    }
  }
  if (w.tail.empty()) {
    r += "it printed nothing\n";
  } else {
    r += "its last " + std::to_string(w.tail.size()) + " line(s):\n";
    for (const auto& line : w.tail) r += "  [rank " + std::to_string(w.rank) + "] " + line + "\n";
  }
  return r;
}

}  // namespace brasarun
