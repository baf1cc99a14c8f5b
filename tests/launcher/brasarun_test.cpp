// brasarun, tested with real processes: it is started as a program, runs the
// test_worker program as its workers, and is judged by its exit status, its
// output and the files the workers leave.

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

namespace {

const std::string kBrasarun = BRASARUN_PATH;
const std::string kWorker = TEST_WORKER_PATH;

double now() {
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

std::vector<std::string> brasarun(std::vector<std::string> options,
                                  std::vector<std::string> worker_args) {
  std::vector<std::string> argv{kBrasarun};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(kWorker);
  argv.insert(argv.end(), worker_args.begin(), worker_args.end());
  return argv;
}

Result run(std::vector<std::string> options, std::vector<std::string> worker_args,
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

std::map<std::string, std::string> read_vars(const std::string& path) {
  std::map<std::string, std::string> vars;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return vars;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

bool wait_for_files(const std::vector<std::string>& paths, double timeout) {
  const double deadline = now() + timeout;
  for (;;) {
    bool all = true;
    for (const auto& p : paths) all = all && fs::exists(p);
    if (all) return true;
    if (now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

pid_t read_pid(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = -1;
  in >> pid;
  return pid;
}

// ---- environment ----

class WorkerEnvironment : public ::testing::TestWithParam<int> {};

TEST_P(WorkerEnvironment, EveryWorkerKnowsItsPlace) {
  const int n = GetParam();
  TempDir dir;
  Result r = run({"--nproc-per-node", std::to_string(n), "--run-id", "env-test"}, {"env", dir.path},
                 {{"OMP_NUM_THREADS", std::nullopt}, {"BRASA_STORE_TOKEN", std::nullopt}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string port, token;
  for (int rank = 0; rank < n; ++rank) {
    auto v = read_vars(dir.path + "/rank_" + std::to_string(rank) + ".env");
    ASSERT_FALSE(v.empty()) << "rank " << rank << " wrote nothing";
    EXPECT_EQ(v["RANK"], std::to_string(rank));
    EXPECT_EQ(v["LOCAL_RANK"], std::to_string(rank));
    EXPECT_EQ(v["WORLD_SIZE"], std::to_string(n));
    EXPECT_EQ(v["LOCAL_WORLD_SIZE"], std::to_string(n));
    EXPECT_EQ(v["GROUP_RANK"], "0");
    EXPECT_EQ(v["GROUP_WORLD_SIZE"], "1");
    EXPECT_EQ(v["MASTER_ADDR"], "127.0.0.1");
    EXPECT_EQ(v["BRASA_RESTART_COUNT"], "0");
    EXPECT_EQ(v["BRASA_MAX_RESTARTS"], "0");
    EXPECT_EQ(v["BRASA_RUN_ID"], "env-test");
    EXPECT_EQ(v["OMP_NUM_THREADS"], "1");
    EXPECT_NE(v["BRASA_ERROR_FILE"].find("error_rank_" + std::to_string(rank)), std::string::npos);
    if (rank == 0) port = v["MASTER_PORT"];
    EXPECT_EQ(v["MASTER_PORT"], port) << "all ranks must agree on the port";
    // A per-job token, so that the job's store admits its own workers only.
    if (rank == 0) token = v["BRASA_STORE_TOKEN"];
    EXPECT_EQ(v["BRASA_STORE_TOKEN"], token);
    EXPECT_EQ(token.size(), 32u) << token;
    int p = std::stoi(v["MASTER_PORT"]);
    EXPECT_GT(p, 0);
    EXPECT_LT(p, 65536);
    // The core helper reads the same place.
    EXPECT_EQ(v["info.source"], "brasarun");
    EXPECT_EQ(v["info.rank"], std::to_string(rank));
    EXPECT_EQ(v["info.world_size"], std::to_string(n));
    EXPECT_EQ(v["info.local_rank"], std::to_string(rank));
    EXPECT_EQ(v["info.group_rank"], "0");
    EXPECT_EQ(v["info.master_port"], port);
    EXPECT_NE(r.out.find("[rank " + std::to_string(rank) + "] rank " + std::to_string(rank) +
                         " of " + std::to_string(n) + " ready"),
              std::string::npos)
        << r.out;
  }
  EXPECT_EQ(count(r.err, "OMP_NUM_THREADS=1"), 1u) << "the notice is printed once:\n" << r.err;
}

INSTANTIATE_TEST_SUITE_P(Workers, WorkerEnvironment, ::testing::Values(1, 2, 4));

TEST(Brasarun, KeepsOmpNumThreadsTheUserSet) {
  TempDir dir;
  Result r = run({"--nproc-per-node", "2"}, {"env", dir.path}, {{"OMP_NUM_THREADS", "3"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_vars(dir.path + "/rank_1.env")["OMP_NUM_THREADS"], "3");
  EXPECT_EQ(r.err.find("OMP_NUM_THREADS"), std::string::npos) << r.err;
}

// ---- output ----

TEST(Brasarun, PrefixesWholeLinesOfEveryWorker) {
  Result r = run({"--nproc-per-node", "3", "--quiet"}, {"partial"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Every stdout line is one whole line of one worker, and each worker's
  // lines arrive in order.
  std::regex line_re(R"(\[rank (\d)\] line (\d+) of rank (\d) piece-b piece-c)");
  std::regex tail_re(R"(\[rank (\d)\] no newline at the end from rank (\d))");
  int next[3] = {0, 0, 0};
  int tails = 0;
  for (const auto& line : lines_of(r.out)) {
    std::smatch m;
    if (std::regex_match(line, m, tail_re)) {
      EXPECT_EQ(m[1], m[2]) << line;
      ++tails;
      continue;
    }
    ASSERT_TRUE(std::regex_match(line, m, line_re)) << "torn or foreign line: '" << line << "'";
    EXPECT_EQ(m[1], m[3]) << line;
    int rank = std::stoi(m[1]);
    EXPECT_EQ(std::stoi(m[2]), next[rank]) << line;
    next[rank] = std::stoi(m[2]) + 1;
  }
  for (int rank = 0; rank < 3; ++rank) EXPECT_EQ(next[rank], 40) << "rank " << rank;
  EXPECT_EQ(tails, 3) << "a last line without newline is still forwarded";
  // stderr stays stderr, prefixed too.
  std::regex err_re(R"(\[rank (\d)\] err (\d+) of rank (\d))");
  int err_lines = 0;
  for (const auto& line : lines_of(r.err)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, err_re)) << "unexpected stderr line: '" << line << "'";
    EXPECT_EQ(m[1], m[3]);
    ++err_lines;
  }
  EXPECT_EQ(err_lines, 120);
}

TEST(Brasarun, ProgressBarsKeepTheirLastState) {
  Result r = run({"--quiet"}, {"progress"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[rank 0] progress 100%\n[rank 0] windows line\n");
}

TEST(Brasarun, WorkerStdoutIsLineBuffered) {
  // The worker prints a line with plain printf and sleeps: the line must
  // reach the console while the worker still runs, not when it exits.
  Process p(brasarun({"--nproc-per-node", "1", "--quiet"}, {"buffered"}));
  bool arrived = p.read_until(
      [&] { return p.out().find("[rank 0] first line of rank 0\n") != std::string::npos; }, 20);
  EXPECT_TRUE(arrived) << "a printf'd line stayed in the worker's buffer";
  kill(p.pid(), SIGTERM);
  Result r = p.finish();
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
}

// ---- failures ----

TEST(Brasarun, FailureStopsTheOthersAndNamesTheRank) {
  Result r = run({"--nproc-per-node", "3", "--timeout-grace", "5"}, {"fail-rank", "1", "3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("first failure: rank 1 (local rank 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exited with code 3"), std::string::npos) << r.err;
  // The error file the worker wrote, and its last line.
  EXPECT_NE(r.err.find("ValueError: the loss went to NaN at step 7"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("second line"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[rank 1] rank 1 about to fail"), std::string::npos) << r.err;
  // The others were stopped, not left to finish their 60 s wait.
  EXPECT_EQ(r.out.find("finished its wait"), std::string::npos) << r.out;
  EXPECT_LT(r.seconds, 30);
}

TEST(Brasarun, WorkersIgnoringSigtermAreKilledAfterTheGracePeriod) {
  Result r = run({"--nproc-per-node", "3", "--timeout-grace", "1"},
                 {"fail-rank", "2", "4", "ignore-term"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("first failure: rank 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exited with code 4"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("finished its wait"), std::string::npos) << r.out;
  EXPECT_LT(r.seconds, 30);
}

TEST(Brasarun, DeathBySignalIsReportedByName) {
  Result r = run({"--nproc-per-node", "2", "--timeout-grace", "1"},
                 {"signal-rank", "1", std::to_string(SIGSEGV)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("first failure: rank 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was killed by signal SIGSEGV"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[rank 1] rank 1 raising signal"), std::string::npos) << r.err;

  r = run({"--nproc-per-node", "2", "--timeout-grace", "1"},
          {"signal-rank", "0", std::to_string(SIGABRT)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("first failure: rank 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("SIGABRT"), std::string::npos) << r.err;
}

TEST(Brasarun, RestartsTheGroupAfterAFailure) {
  Result r = run({"--nproc-per-node", "2", "--max-restarts", "3"}, {"fail-first-attempt"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(r.err, "restarting the worker group"), 1u) << r.err;
  EXPECT_NE(r.err.find("restart 1 of 3"), std::string::npos) << r.err;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(count(r.out, "rank " + std::to_string(rank) + " attempt 1"), 1u) << r.out;
    EXPECT_EQ(count(r.out, "attempt 2"), 0u) << r.out;
  }
}

TEST(Brasarun, GivesUpAfterMaxRestarts) {
  Result r = run({"--nproc-per-node", "2", "--max-restarts", "2"}, {"always-fail"});
  EXPECT_EQ(r.exit_code, 1);
  for (int attempt = 0; attempt <= 2; ++attempt)
    EXPECT_EQ(count(r.out, "[rank 0] rank 0 attempt " + std::to_string(attempt)), 1u) << r.out;
  EXPECT_EQ(count(r.out, "attempt 3"), 0u) << r.out;
  EXPECT_EQ(count(r.err, "restarting the worker group"), 2u) << r.err;
  EXPECT_NE(r.err.find("the job failed after 2 restart(s)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("first failure: rank 0 (local rank 0"), std::string::npos) << r.err;
}

TEST(Brasarun, ProgramThatCannotRunIsAFailureOfItsRank) {
  TempDir dir;
  std::string script = dir.path + "/not-a-program";
  std::ofstream(script) << "this is text, not an executable\n";
  fs::permissions(script, fs::perms::owner_all);
  Process p({kBrasarun, "--quiet", script});
  Result r = p.finish();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot execute"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exited with code 127"), std::string::npos) << r.err;
}

// ---- signals ----

class SignalForwarding : public ::testing::TestWithParam<int> {};

TEST_P(SignalForwarding, ReachesEveryWorker) {
  const int sig = GetParam();
  TempDir dir;
  Process p(brasarun({"--nproc-per-node", "2", "--quiet"}, {"wait-signal", dir.path}));
  ASSERT_TRUE(wait_for_files({dir.path + "/rank_0.pid", dir.path + "/rank_1.pid"}, 20))
      << "workers did not start";
  kill(p.pid(), sig);
  Result r = p.finish();
  EXPECT_EQ(r.exit_code, 128 + sig) << r.err;
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream in(dir.path + "/rank_" + std::to_string(rank) + ".signal");
    int got = 0;
    in >> got;
    EXPECT_EQ(got, sig) << "rank " << rank;
  }
}

INSTANTIATE_TEST_SUITE_P(Signals, SignalForwarding, ::testing::Values(SIGINT, SIGTERM, SIGHUP));

// Whether `pid` ends within `seconds`: reaped here (this test process is a
// subreaper, so orphans come to it) or already reaped by its own parent.
bool gone_within(pid_t pid, double seconds) {
  const double deadline = now() + seconds;
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    if (now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TEST(Brasarun, NoOrphansWhenBrasarunIsKilled) {
  // Orphans are re-parented to this test process, which can then see them die.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  TempDir dir;
  Process p(brasarun({"--nproc-per-node", "3", "--quiet"}, {"sleep-pid", dir.path}));
  std::vector<std::string> pid_files;
  for (int rank = 0; rank < 3; ++rank)
    pid_files.push_back(dir.path + "/rank_" + std::to_string(rank) + ".pid");
  ASSERT_TRUE(wait_for_files(pid_files, 20)) << "workers did not start";
  kill(p.pid(), SIGKILL);
  Result r = p.finish();
  EXPECT_EQ(r.signal, SIGKILL);
  for (const auto& f : pid_files) {
    pid_t pid = read_pid(f);
    ASSERT_GT(pid, 0);
    EXPECT_TRUE(gone_within(pid, 20)) << "worker " << pid << " outlived brasarun";
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

// What the workers started goes too: a child in the worker's group and one
// that made a session of its own (each worker runs under a guardian that
// kills its descendants when brasarun dies).
TEST(Brasarun, NothingAWorkerStartedOutlivesAKilledBrasarun) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);  // survivors would come to this process
  TempDir dir;
  Process p(brasarun({"--nproc-per-node", "2", "--quiet"}, {"family", dir.path}));
  std::vector<std::string> files = {dir.path + "/rank_0.family", dir.path + "/rank_1.family"};
  ASSERT_TRUE(wait_for_files(files, 20)) << "workers did not start";
  std::vector<pid_t> pids;
  for (const auto& f : files) {
    std::ifstream in(f);
    pid_t a = 0, b = 0, c = 0;
    in >> a >> b >> c;
    ASSERT_TRUE(a > 0 && b > 0 && c > 0) << f;
    pids.insert(pids.end(), {a, b, c});
  }
  kill(p.pid(), SIGKILL);
  p.finish();
  for (pid_t pid : pids) {
    const bool gone = gone_within(pid, 20);
    EXPECT_TRUE(gone) << "process " << pid << " outlived brasarun";
    if (!gone) kill(pid, SIGKILL);
  }
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

// ---- several nodes ----

// Starts node 0 on a port it picks and returns that port (0 on failure).
// The nodes of a multi-node job share a secret.
const std::vector<std::pair<std::string, std::optional<std::string>>> kJobEnv = {
    {"BRASA_JOB_TOKEN", "job-token-for-the-tests"}};

int rendezvous_port(Process& node0) {
  std::regex port_re(R"(rendezvous listening on port (\d+))");
  std::smatch m;
  if (!node0.read_until([&] { return std::regex_search(node0.err(), m, port_re); }, 20)) return 0;
  return std::stoi(m[1]);
}

TEST(Brasarun, TwoNodesOnLoopback) {
  TempDir dir;
  Process node0(
      brasarun({"--nnodes", "2", "--node-rank", "0", "--nproc-per-node", "2"}, {"env", dir.path}),
      kJobEnv);
  int port = rendezvous_port(node0);
  ASSERT_GT(port, 0) << node0.err();
  Process node1(brasarun({"--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "2",
                          "--master-port", std::to_string(port)},
                         {"env", dir.path}),
                kJobEnv);
  Result r1 = node1.finish();
  Result r0 = node0.finish();
  ASSERT_EQ(r0.exit_code, 0) << r0.err;
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  std::string master_port, run_id;
  for (int rank = 0; rank < 4; ++rank) {
    auto v = read_vars(dir.path + "/rank_" + std::to_string(rank) + ".env");
    ASSERT_FALSE(v.empty()) << "rank " << rank << " wrote nothing";
    EXPECT_EQ(v["RANK"], std::to_string(rank));
    EXPECT_EQ(v["LOCAL_RANK"], std::to_string(rank % 2));
    EXPECT_EQ(v["WORLD_SIZE"], "4");
    EXPECT_EQ(v["LOCAL_WORLD_SIZE"], "2");
    EXPECT_EQ(v["GROUP_RANK"], std::to_string(rank / 2));
    EXPECT_EQ(v["GROUP_WORLD_SIZE"], "2");
    EXPECT_EQ(v["info.group_rank"], std::to_string(rank / 2));
    if (rank == 0) {
      master_port = v["MASTER_PORT"];
      run_id = v["BRASA_RUN_ID"];
    }
    EXPECT_EQ(v["MASTER_PORT"], master_port);
    EXPECT_EQ(v["BRASA_RUN_ID"], run_id);
  }
  EXPECT_NE(master_port, std::to_string(port)) << "the workers get their own port";
  EXPECT_NE(r1.out.find("[rank 3] rank 3 of 4 ready"), std::string::npos) << r1.out;
  EXPECT_NE(r0.out.find("[rank 0] rank 0 of 4 ready"), std::string::npos) << r0.out;
}

TEST(Brasarun, AFailureOnOneNodeRestartsBothNodes) {
  // Rank 1 (node 0's second worker... here node 1's first) fails on the first attempt only.
  Process node0(brasarun({"--nnodes", "2", "--node-rank", "0", "--max-restarts", "1"},
                         {"fail-first-attempt"}),
                kJobEnv);
  int port = rendezvous_port(node0);
  ASSERT_GT(port, 0) << node0.err();
  Process node1(brasarun({"--nnodes", "2", "--node-rank", "1", "--max-restarts", "1",
                          "--master-port", std::to_string(port)},
                         {"fail-first-attempt"}),
                kJobEnv);
  Result r1 = node1.finish();
  Result r0 = node0.finish();
  EXPECT_EQ(r0.exit_code, 0) << r0.err;
  EXPECT_EQ(r1.exit_code, 0) << r1.err;
  EXPECT_NE(r0.out.find("[rank 0] rank 0 attempt 1"), std::string::npos) << r0.out;
  EXPECT_NE(r1.out.find("[rank 1] rank 1 attempt 1"), std::string::npos) << r1.out;
  EXPECT_NE(r0.err.find("rank 1 on node 1"), std::string::npos)
      << "node 0 names the failing rank:\n"
      << r0.err;
}

TEST(Brasarun, TwoNodeFailureWithoutRestartsFailsBothNamingTheRank) {
  Process node0(brasarun({"--nnodes", "2", "--node-rank", "0", "--timeout-grace", "1"},
                         {"fail-rank", "1", "9"}),
                kJobEnv);
  int port = rendezvous_port(node0);
  ASSERT_GT(port, 0) << node0.err();
  Process node1(brasarun({"--nnodes", "2", "--node-rank", "1", "--timeout-grace", "1",
                          "--master-port", std::to_string(port)},
                         {"fail-rank", "1", "9"}),
                kJobEnv);
  Result r1 = node1.finish();
  Result r0 = node0.finish();
  EXPECT_EQ(r0.exit_code, 1);
  EXPECT_EQ(r1.exit_code, 1);
  for (const auto* r : {&r0, &r1}) {
    EXPECT_NE(r->err.find("first failure: rank 1 on node 1"), std::string::npos) << r->err;
    EXPECT_NE(r->err.find("exited with code 9"), std::string::npos) << r->err;
  }
  EXPECT_NE(r1.err.find("ValueError"), std::string::npos)
      << "the failing node shows the error file:\n"
      << r1.err;
}

// Sends one line to 127.0.0.1:port and returns what comes back before the
// connection closes.
// Connects to the rendezvous on loopback and sends `line`; the socket stays
// open (-1 when the connection was refused).
int connect_and_say(int port, const std::string& line) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  if (!line.empty()) (void)!send(fd, line.data(), line.size(), MSG_NOSIGNAL);
  return fd;
}

// Everything the peer sends until it closes (or 5 s pass); closes `fd`.
std::string read_to_end(int fd) {
  if (fd < 0) return "<refused>";
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string got;
  char buf[512];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof buf, 0)) > 0) got.append(buf, static_cast<size_t>(n));
  close(fd);
  return got;
}

std::string say_to(int port, const std::string& line) {
  return read_to_end(connect_and_say(port, line));
}

TEST(Brasarun, TheRendezvousAdmitsOnlyTheJobsNodes) {
  TempDir dir;
  Process node0(brasarun({"--nnodes", "2", "--node-rank", "0"}, {"env", dir.path}), kJobEnv);
  const int port = rendezvous_port(node0);
  ASSERT_GT(port, 0) << node0.err();
  // A stranger's abort is refused and changes nothing.
  EXPECT_NE(say_to(port, "abort stop this job\n").find("needs the job's token first"),
            std::string::npos);
  EXPECT_NE(say_to(port, "auth guess\nabort stop this job\n").find("wrong job token"),
            std::string::npos);
  // A node with another token is refused, and says so.
  Process stranger(
      brasarun({"--nnodes", "2", "--node-rank", "1", "--master-port", std::to_string(port)},
               {"env", dir.path}),
      {{"BRASA_JOB_TOKEN", "not-the-job-token"}});
  Result rs = stranger.finish(30);
  EXPECT_NE(rs.exit_code, 0);
  EXPECT_NE(rs.err.find("wrong job token (BRASA_JOB_TOKEN differs from node 0's)"),
            std::string::npos)
      << rs.err;
  // The job's own node joins and the job finishes.
  Process node1(
      brasarun({"--nnodes", "2", "--node-rank", "1", "--master-port", std::to_string(port)},
               {"env", dir.path}),
      kJobEnv);
  Result r1 = node1.finish();
  Result r0 = node0.finish();
  EXPECT_EQ(r0.exit_code, 0) << r0.err;
  EXPECT_EQ(r1.exit_code, 0) << r1.err;
  // Both nodes' workers got the job's token for their store.
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_EQ(read_vars(dir.path + "/rank_" + std::to_string(rank) + ".env")["BRASA_STORE_TOKEN"],
              "job-token-for-the-tests");
}

// The rendezvous of 2 nodes holds at most 2 * 2 + 16 = 20 connections. At the
// bound, a stranger that has not shown the token gives way to a newcomer;
// when all 20 have shown it, the newcomer is refused, saying why; and once
// they are gone the job's own node still joins.
TEST(Brasarun, TheRendezvousBoundsItsConnections) {
  TempDir dir;
  Process node0(
      brasarun({"--nnodes", "2", "--node-rank", "0", "--rdzv-timeout", "60"}, {"env", dir.path}),
      kJobEnv);
  const int port = rendezvous_port(node0);
  ASSERT_GT(port, 0) << node0.err();
  const auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(500)); };
  const std::string auth = "auth job-token-for-the-tests\n";
  const int stranger = connect_and_say(port, "");
  ASSERT_GE(stranger, 0);
  settle();
  std::vector<int> held;
  for (int i = 0; i < 19; ++i) {
    held.push_back(connect_and_say(port, auth));
    ASSERT_GE(held.back(), 0);
  }
  settle();  // all 20 accepted, the 19 authenticated
  held.push_back(connect_and_say(port, auth));
  EXPECT_NE(read_to_end(stranger).find("no job token within 10 s"), std::string::npos);
  settle();
  EXPECT_NE(say_to(port, auth).find("error the rendezvous has too many connections"),
            std::string::npos);
  for (int fd : held) close(fd);
  settle();
  Process node1(
      brasarun({"--nnodes", "2", "--node-rank", "1", "--master-port", std::to_string(port)},
               {"env", dir.path}),
      kJobEnv);
  Result r1 = node1.finish();
  Result r0 = node0.finish();
  EXPECT_EQ(r0.exit_code, 0) << r0.err;
  EXPECT_EQ(r1.exit_code, 0) << r1.err;
}

TEST(Brasarun, MissingNodeTimesOutWithItsName) {
  Process node0(brasarun({"--nnodes", "3", "--node-rank", "0", "--rdzv-timeout", "1"},
                         {"env", "/nonexistent"}),
                kJobEnv);
  Result r = node0.finish();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("node(s) 1, 2 did not join"), std::string::npos) << r.err;
}

// ---- ports ----

TEST(Brasarun, PicksAFreePortForTheWorkers) {
  for (int i = 0; i < 2; ++i) {
    Result r = run({"--nproc-per-node", "2", "--quiet"}, {"bind-port"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("[rank 0] bound port"), std::string::npos) << r.out;
  }
}

TEST(Brasarun, PassesAGivenMasterPort) {
  TempDir dir;
  Result r = run({"--master-port", "29517", "--master-addr", "localhost"}, {"env", dir.path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto v = read_vars(dir.path + "/rank_0.env");
  EXPECT_EQ(v["MASTER_PORT"], "29517");
  EXPECT_EQ(v["MASTER_ADDR"], "localhost");
}

// ---- command line ----

TEST(Brasarun, BadArgumentsExitWithCode2AndSayWhy) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "no program given"},
      {{"--frobnicate", "x"}, "unknown option '--frobnicate'"},
      {{"--nproc-per-node", "0", "prog"},
       "--nproc-per-node expects an integer in [1, 4096], got '0'"},
      {{"--nproc-per-node", "two", "prog"}, "got 'two'"},
      {{"--nproc-per-node"}, "--nproc-per-node needs a value"},
      {{"--nnodes", "2", "--node-rank", "2", "prog"}, "--node-rank 2 is not below --nnodes 2"},
      {{"--nnodes", "2", "--node-rank", "1", "prog"}, "node 1 needs --master-port"},
      {{"--nnodes", "2", "--node-rank", "0", "prog"},
       "a job of several nodes needs a shared secret, so that nobody else can join or stop it: "
       "set BRASA_JOB_TOKEN"},
      {{"--master-port", "70000", "prog"}, "--master-port expects an integer in [0, 65535]"},
      {{"--tee", "prog"}, "--tee and --redirect need --log-dir"},
      {{"--log-dir", "/tmp", "--tee=1", "--redirect=3", "prog"},
       "a stream cannot be both tee'd and redirected"},
      {{"--tee=4", "--log-dir", "/tmp", "prog"},
       "--tee expects 1 (stdout), 2 (stderr) or 3 (both), got '4'"},
      {{"--quiet=yes", "prog"}, "--quiet takes no value"},
      {{"--master-addr=", "prog"}, "--master-addr must not be empty"},
      {{"--log-dir", "/proc/brasarun-cannot-be-here", "true"},
       "cannot create --log-dir '/proc/brasarun-cannot-be-here'"},
      {{"--timeout-grace", "-1", "prog"}, "--timeout-grace expects a number of seconds >= 0"},
      {{"--run-id", "a b", "prog"}, "--run-id may hold letters"},
      {{"-n", "2", "prog"}, "unknown option '-n'"},
      {{"no-such-program-anywhere"},
       "program 'no-such-program-anywhere' is not an executable file on PATH"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv{kBrasarun};
    argv.insert(argv.end(), args.begin(), args.end());
    Process p(argv);
    Result r = p.finish();
    EXPECT_EQ(r.exit_code, 2) << "for: " << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << "expected '" << message << "' in:\n"
                                                      << r.err;
  }
}

TEST(Brasarun, HelpDocumentsEveryOption) {
  Process p({kBrasarun, "--help"});
  Result r = p.finish();
  EXPECT_EQ(r.exit_code, 0);
  for (const char* opt :
       {"--nproc-per-node", "--nnodes", "--node-rank", "--master-addr", "--master-port",
        "--max-restarts", "--log-dir", "--tee", "--redirect", "--run-id", "--monitor-interval",
        "--timeout-grace", "--rdzv-timeout", "RANK", "LOCAL_WORLD_SIZE", "BRASA_ERROR_FILE",
        "OMP_NUM_THREADS", "exit codes"})
    EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
}

TEST(Brasarun, AcceptsEqualsAndUnderscoreSpellings) {
  TempDir dir;
  Result r = run({"--nproc_per_node=2", "--run-id=spelled"}, {"env", dir.path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_vars(dir.path + "/rank_1.env")["BRASA_RUN_ID"], "spelled");
}

// ---- logs ----

TEST(Brasarun, LogDirHoldsOneFilePerRankAndACombinedLog) {
  TempDir dir;
  std::string logs = dir.path + "/logs/nested";
  Result r = run({"--nproc-per-node", "2", "--log-dir", logs}, {"partial"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("[rank 1] line 39 of rank 1 piece-b piece-c"), std::string::npos)
      << "--tee is the default";
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream in(logs + "/rank_" + std::to_string(rank) + ".log");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    EXPECT_EQ(count(text, "of rank " + std::to_string(rank) + " piece-b piece-c\n"), 40u) << text;
    EXPECT_EQ(count(text, "err "), 40u);
    EXPECT_EQ(text.find("[rank"), std::string::npos) << "rank logs are not prefixed";
    EXPECT_EQ(count(text, "of rank " + std::to_string(1 - rank)), 0u);
  }
  std::ifstream in(logs + "/combined.log");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(count(ss.str(), "[rank 0] line "), 40u);
  EXPECT_EQ(count(ss.str(), "[rank 1] err "), 40u);
  EXPECT_NE(ss.str().find("brasarun: all workers succeeded"), std::string::npos) << ss.str();
}

TEST(Brasarun, RedirectSendsWorkerOutputToTheLogsOnly) {
  TempDir dir;
  Result r =
      run({"--nproc-per-node", "2", "--log-dir", dir.path, "--redirect=1", "--quiet"}, {"partial"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "") << "stdout was redirected";
  EXPECT_EQ(count(r.err, "] err "), 80u) << "stderr still reaches the console";
  std::ifstream in(dir.path + "/rank_1.log");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(count(ss.str(), "piece-c"), 40u);
}

}  // namespace
