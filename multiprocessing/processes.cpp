#include <brasa/multiprocessing/processes.h>
#include <brasa/multiprocessing/queue.h>
#include <brasa/multiprocessing/sharing_strategy.h>
#include <brasa/util/error.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace brasa::multiprocessing {

namespace {

struct Child {
  pid_t pid = -1;
  int error_fd = -1;  // read end of the pipe the child writes its exception to
  bool exited = false;
  int status = 0;
};

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return out;
  }
}

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// The spawn start method's child learns what to run from its environment.
constexpr const char* kEnvEntry = "BRASA_MP_SPAWN_ENTRY";
constexpr const char* kEnvRank = "BRASA_MP_SPAWN_RANK";
constexpr const char* kEnvErrorFd = "BRASA_MP_SPAWN_ERROR_FD";
constexpr const char* kEnvParent = "BRASA_MP_SPAWN_PARENT";
constexpr const char* kEnvQueues = "BRASA_MP_SPAWN_QUEUES";

// The queues this process's parent passed it (ProcessOptions::queues): the
// parent's own objects after a fork, adopted descriptors after a re-exec.
std::vector<Queue*> g_inherited_queues;
std::vector<std::unique_ptr<Queue>> g_adopted_queues;

// "send,recv,keeper;..." for a re-executed child; their descriptors stay open
// across execve.
std::string pass_queues(const std::vector<Queue*>& queues) {
  std::string out;
  for (Queue* q : queues) {
    const detail::QueueEnds ends = detail::queue_ends(*q);
    fcntl(ends.send_fd, F_SETFD, 0);
    fcntl(ends.recv_fd, F_SETFD, 0);
    if (!out.empty()) out += ';';
    out += std::to_string(ends.send_fd) + "," + std::to_string(ends.recv_fd) + "," +
           std::to_string(ends.keeper);
  }
  return out;
}

void adopt_queues(const char* passed) {
  std::istringstream in(passed);
  std::string item;
  while (std::getline(in, item, ';')) {
    detail::QueueEnds ends{};
    long keeper = 0;
    if (std::sscanf(item.c_str(), "%d,%d,%ld", &ends.send_fd, &ends.recv_fd, &keeper) != 3)
      _exit(1);
    ends.keeper = static_cast<pid_t>(keeper);
    fcntl(ends.send_fd, F_SETFD, FD_CLOEXEC);  // not for this child's own children
    fcntl(ends.recv_fd, F_SETFD, FD_CLOEXEC);
    g_adopted_queues.push_back(detail::adopt_queue(ends));
    g_inherited_queues.push_back(g_adopted_queues.back().get());
  }
}

std::mutex& entries_mu() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, std::function<void(int)>>& entries() {
  static std::map<std::string, std::function<void(int)>> m;
  return m;
}
std::function<void(int)> find_entry(const std::string& name, const char* op) {
  std::lock_guard<std::mutex> lock(entries_mu());
  auto it = entries().find(name);
  BRASA_CHECK(it != entries().end(), op, ": no entry named '", name,
              "' is registered in this program (static multiprocessing::Entry e(\"", name,
              "\", fn); at namespace scope)");
  return it->second;
}

// A process started by the spawn start method whose main() reached
// start_processes without calling spawn_main() first would start its own
// children, and so on: it fails instead, telling its parent why.
void refuse_unhandled_spawned_child(const char* op) {
  const char* entry = std::getenv(kEnvEntry);
  if (!entry) return;
  const std::string message =
      std::string(op) + ": this process was started by the spawn start method to run entry '" +
      entry + "', but main() did not call multiprocessing::spawn_main() first";
  if (const char* fd = std::getenv(kEnvErrorFd)) write_all(std::atoi(fd), message);
  BRASA_ERROR(message);
}

// The program's command line, to re-execute it.
std::vector<std::string> command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

[[noreturn]] void exec_child(const std::vector<std::string>& args, const std::string& entry,
                             const std::vector<Queue*>& queues, int rank, int error_fd,
                             pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // kept across execve
  if (getppid() != parent) _exit(1);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "BRASA_MP_SPAWN_", 15) != 0) env.emplace_back(*e);
  env.push_back(std::string(kEnvEntry) + "=" + entry);
  env.push_back(std::string(kEnvRank) + "=" + std::to_string(rank));
  env.push_back(std::string(kEnvErrorFd) + "=" + std::to_string(error_fd));
  env.push_back(std::string(kEnvParent) + "=" + std::to_string(parent));
  if (!queues.empty()) env.push_back(std::string(kEnvQueues) + "=" + pass_queues(queues));
  std::vector<char*> argv, envp;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  fcntl(error_fd, F_SETFD, 0);  // the new program writes its failure here
  execve("/proc/self/exe", argv.data(), envp.data());
  write_all(error_fd, std::string("spawn: cannot re-execute the program: ") + std::strerror(errno));
  _exit(1);
}

[[noreturn]] void run_child(const std::function<void(int)>& fn, int rank, int error_fd,
                            pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);  // the parent died before the line above
  int code = 0;
  try {
    fn(rank);
  } catch (const std::exception& e) {
    write_all(error_fd, e.what());
    code = 1;
  } catch (...) {
    write_all(error_fd, "an exception that is not a std::exception");
    code = 1;
  }
  std::fflush(nullptr);
  detail::release_process_references();  // no atexit handlers below
  _exit(code);  // no atexit handlers or static destructors of the parent's program
}

// Children started by this process and not yet reaped, for peer_failure().
std::mutex g_children_mu;
std::vector<std::pair<pid_t, int>> g_children;  // pid, rank

void forget_child(pid_t pid) {
  std::lock_guard<std::mutex> lock(g_children_mu);
  std::erase_if(g_children, [&](const auto& c) { return c.first == pid; });
}

}  // namespace

namespace detail {

std::optional<std::string> peer_failure() {
  std::lock_guard<std::mutex> lock(g_children_mu);
  for (const auto& [pid, rank] : g_children) {
    siginfo_t info{};
    // WNOWAIT: the child stays a zombie for its context's join() to reap.
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid != pid)
      continue;
    const std::string who =
        "process " + std::to_string(rank) + " (pid " + std::to_string(pid) + ")";
    if (info.si_code == CLD_EXITED && info.si_status != 0)
      return who + " exited with exit code " + std::to_string(info.si_status);
    if (info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED)
      return who + " was killed by signal " + signal_name(info.si_status);
  }
  return std::nullopt;
}

}  // namespace detail

struct ProcessContext::State {
  std::vector<Child> children;
  std::chrono::milliseconds grace{3000};
  bool joined = false;

  // Reaps `c` if it exited; true when it has.
  bool poll(Child& c) {
    if (c.exited) return true;
    pid_t r = waitpid(c.pid, &c.status, WNOHANG);
    if (r == c.pid) {
      c.exited = true;
      forget_child(c.pid);
    }
    return c.exited;
  }
  bool failed(const Child& c) const {
    return c.exited && !(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
  }
  // SIGTERM to the running children, SIGKILL after the grace period.
  void stop_all() {
    for (Child& c : children)
      if (!poll(c)) kill(c.pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    for (;;) {
      bool running = false;
      for (Child& c : children) running |= !poll(c);
      if (!running) return;
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    for (Child& c : children)
      if (!c.exited) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, &c.status, 0);
        c.exited = true;
        forget_child(c.pid);
      }
  }
  [[noreturn]] void raise(size_t rank) {
    Child& c = children[rank];
    const std::string message = read_all(c.error_fd);
    stop_all();
    joined = true;
    sweep_shared_memory();  // named segments the dead held
    const std::string who =
        "process " + std::to_string(rank) + " (pid " + std::to_string(c.pid) + ") terminated";
    if (!message.empty())
      throw ProcessRaisedException(who + " with the following error:\n" + message,
                                   static_cast<int>(rank), c.pid);
    if (WIFSIGNALED(c.status)) {
      const int sig = WTERMSIG(c.status);
      throw ProcessExitedException(
          who + " with signal " + signal_name(sig) + " (" + strsignal(sig) + ")",
          static_cast<int>(rank), c.pid, -sig, signal_name(sig));
    }
    const int code = WEXITSTATUS(c.status);
    throw ProcessExitedException(who + " with exit code " + std::to_string(code),
                                 static_cast<int>(rank), c.pid, code, "");
  }
  ~State() {
    if (!joined) {  // a context dropped without join leaves no process behind
      stop_all();
      sweep_shared_memory();
    }
    for (Child& c : children)
      if (c.error_fd >= 0) close(c.error_fd);
  }
};

bool ProcessContext::join(std::optional<std::chrono::milliseconds> timeout) {
  BRASA_CHECK(state_, "ProcessContext.join: no processes were started");
  const auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout
                                : std::chrono::steady_clock::time_point::max();
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    bool all = true;
    for (size_t r = 0; r < state_->children.size(); ++r) {
      Child& c = state_->children[r];
      if (!state_->poll(c)) {
        all = false;
        continue;
      }
      if (state_->failed(c)) state_->raise(r);
    }
    if (all) {
      state_->joined = true;
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
}

std::vector<pid_t> ProcessContext::pids() const {
  std::vector<pid_t> out;
  if (state_)
    for (const Child& c : state_->children) out.push_back(c.pid);
  return out;
}

// Builds contexts: the one friend of ProcessContext.
class ProcessLauncher {
 public:
  static ProcessContext make(const ProcessOptions& options) {
    ProcessContext ctx;
    ctx.state_ = std::make_shared<ProcessContext::State>();
    ctx.state_->grace = options.grace_period_;
    return ctx;
  }
  static void add(ProcessContext& ctx, pid_t pid, int rank, int error_fd) {
    ctx.state_->children.push_back(Child{pid, error_fd});
    std::lock_guard<std::mutex> lock(g_children_mu);
    g_children.emplace_back(pid, rank);
  }
  // Stops the children started so far (a later one failed to start).
  static void abandon(ProcessContext& ctx) {
    ctx.state_->stop_all();
    ctx.state_->joined = true;
  }
};

namespace {

// Starts nprocs children, each running child(rank, error_fd, parent), which
// does not return.
template <class Child>
ProcessContext launch(int nprocs, const ProcessOptions& options, Child child) {
  BRASA_CHECK(nprocs >= 1, "start_processes: nprocs must be at least 1, got ", nprocs);
  for (size_t i = 0; i < options.queues_.size(); ++i)
    BRASA_CHECK(options.queues_[i] != nullptr, "start_processes: queues()[", i, "] is null");
  ProcessContext ctx = ProcessLauncher::make(options);
  const pid_t parent = getpid();
  std::fflush(nullptr);  // buffered output would be written twice
  for (int rank = 0; rank < nprocs; ++rank) {
    int fds[2];
    BRASA_CHECK(pipe2(fds, O_CLOEXEC) == 0, "start_processes: pipe failed: ", std::strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
      const int err = errno;
      close(fds[0]);
      close(fds[1]);
      ProcessLauncher::abandon(ctx);
      BRASA_ERROR("start_processes: fork of process ", rank, " failed: ", std::strerror(err));
    }
    if (pid == 0) {
      close(fds[0]);
      g_inherited_queues = options.queues_;
      child(rank, fds[1], parent);
    }
    close(fds[1]);
    ProcessLauncher::add(ctx, pid, rank, fds[0]);
  }
  if (options.join_) ctx.join();
  return ctx;
}

}  // namespace

ProcessContext start_processes(std::function<void(int)> fn, int nprocs,
                               const ProcessOptions& options) {
  refuse_unhandled_spawned_child("start_processes");
  BRASA_CHECK(fn, "start_processes: the function is empty");
  BRASA_CHECK(options.start_method_ != "spawn",
              "start_processes: the spawn start method re-executes the program, where a "
              "std::function cannot follow; register the function as an entry (static "
              "multiprocessing::Entry e(\"name\", fn); at namespace scope) and pass its name");
  BRASA_CHECK(options.start_method_ == "fork", "start_processes: unknown start method '",
              options.start_method_, "' (expected 'fork' or 'spawn')");
  return launch(nprocs, options, [&](int rank, int error_fd, pid_t parent) {
    run_child(fn, rank, error_fd, parent);
  });
}

ProcessContext start_processes(const std::string& entry, int nprocs,
                               const ProcessOptions& options) {
  refuse_unhandled_spawned_child("start_processes");
  std::function<void(int)> fn = find_entry(entry, "start_processes");
  if (options.start_method_ != "spawn") return start_processes(fn, nprocs, options);
  const std::vector<std::string> args = command_line();
  BRASA_CHECK(!args.empty(), "start_processes: cannot read this program's command line");
  return launch(nprocs, options, [&](int rank, int error_fd, pid_t parent) {
    exec_child(args, entry, options.queues_, rank, error_fd, parent);
  });
}

void spawn(std::function<void(int)> fn, int nprocs) {
  start_processes(std::move(fn), nprocs, ProcessOptions().join(true));
}

void spawn(const std::string& entry, int nprocs) {
  start_processes(entry, nprocs, ProcessOptions().join(true).start_method("spawn"));
}

Entry::Entry(const std::string& name, std::function<void(int)> fn) {
  BRASA_CHECK(fn, "multiprocessing::Entry '", name, "': the function is empty");
  std::lock_guard<std::mutex> lock(entries_mu());
  BRASA_CHECK(entries().emplace(name, std::move(fn)).second, "multiprocessing::Entry: '", name,
              "' is registered twice");
}

void spawn_main() {
  const char* entry = std::getenv(kEnvEntry);
  if (!entry) return;
  const std::string name = entry;
  const char* rank = std::getenv(kEnvRank);
  const char* fd = std::getenv(kEnvErrorFd);
  const char* parent = std::getenv(kEnvParent);
  if (!rank || !fd || !parent) _exit(1);
  const int error_fd = std::atoi(fd);
  if (const char* queues = std::getenv(kEnvQueues)) adopt_queues(queues);
  for (const char* v : {kEnvEntry, kEnvRank, kEnvErrorFd, kEnvParent, kEnvQueues}) unsetenv(v);
  fcntl(error_fd, F_SETFD, FD_CLOEXEC);  // not for this child's own children
  std::function<void(int)> fn;
  try {
    fn = find_entry(name, "spawn_main");
  } catch (const std::exception& e) {
    write_all(error_fd, e.what());
    _exit(1);
  }
  run_child(fn, std::atoi(rank), error_fd, static_cast<pid_t>(std::atol(parent)));
}

Queue& inherited_queue(size_t index) {
  BRASA_CHECK(index < g_inherited_queues.size(), "inherited_queue: index ", index,
              " is out of range: this process's parent passed it ", g_inherited_queues.size(),
              " queue(s) (start_processes with ProcessOptions().queues({...}))");
  return *g_inherited_queues[index];
}

}  // namespace brasa::multiprocessing
