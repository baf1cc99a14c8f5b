// brasarun, tested with real processes: it is started as a program, runs the
// test_worker program as its workers, and is judged by its exit status, its
// output and the files the workers leave.

#include "brasarun_test_util.h"

namespace {

using namespace brasarun_test;

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

// brasarun's temporary directory (the workers' error files) cannot be removed
// by a SIGKILLed brasarun: the guardians remove it. A --log-dir is the
// user's and stays.
TEST(Brasarun, AKilledBrasarunLeavesNoTemporaryDirectory) {
  TempDir tmp, pids, logs;
  auto entries = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(tmp.path))
      names.push_back(e.path().filename().string());
    return names;
  };
  for (bool log_dir : {false, true}) {
    std::vector<std::string> options{"--nproc-per-node", "2", "--quiet"};
    if (log_dir) options.insert(options.end(), {"--log-dir", logs.path});
    Process p(brasarun(options, {"sleep-pid", pids.path}), {{"TMPDIR", tmp.path}});
    std::vector<std::string> pid_files{pids.path + "/rank_0.pid", pids.path + "/rank_1.pid"};
    ASSERT_TRUE(wait_for_files(pid_files, 20)) << "workers did not start";
    if (!log_dir) EXPECT_EQ(entries().size(), 1u) << "brasarun made no temporary directory";
    kill(p.pid(), SIGKILL);
    p.finish();
    const double deadline = now() + 20;
    while (!entries().empty() && now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto left = entries();
    EXPECT_TRUE(left.empty()) << "left in TMPDIR: " << left[0];
    EXPECT_TRUE(fs::is_directory(logs.path));
    for (const auto& f : pid_files) fs::remove(f);
  }
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
