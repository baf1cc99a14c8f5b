// The worker program the brasarun tests launch. Its first argument picks what
// it does; see the branches of main.

#include <brasa/util/launch_env.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : -1;
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

std::string g_dir;
int g_rank = -1;

void record_signal(int sig) {
  // Only async-signal-safe calls: the file name was built before.
  static char path[4096];
  std::snprintf(path, sizeof path, "%s/rank_%d.signal", g_dir.c_str(), g_rank);
  FILE* f = std::fopen(path, "w");
  if (f) {
    std::fprintf(f, "%d\n", sig);
    std::fclose(f);
  }
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 100;
  const std::string mode = argv[1];
  const int rank = env_int("RANK");
  g_rank = rank;

  if (mode == "env" && argc == 3) {
    // Every variable brasarun sets, then what the core helper reads from them.
    const char* names[] = {"RANK",
                           "LOCAL_RANK",
                           "WORLD_SIZE",
                           "LOCAL_WORLD_SIZE",
                           "GROUP_RANK",
                           "GROUP_WORLD_SIZE",
                           "MASTER_ADDR",
                           "MASTER_PORT",
                           "BRASA_RESTART_COUNT",
                           "BRASA_MAX_RESTARTS",
                           "BRASA_RUN_ID",
                           "BRASA_ERROR_FILE",
                           "BRASA_STORE_TOKEN",
                           "OMP_NUM_THREADS"};
    std::string out;
    for (const char* n : names) {
      const char* v = std::getenv(n);
      out += std::string(n) + "=" + (v ? v : "<unset>") + "\n";
    }
    auto info = brasa::launch::launch_info();
    out += "info.source=" + std::string(brasa::launch::to_string(info.source)) + "\n";
    out += "info.rank=" + std::to_string(info.rank) + "\n";
    out += "info.world_size=" + std::to_string(info.world_size) + "\n";
    out += "info.local_rank=" + std::to_string(info.local_rank) + "\n";
    out += "info.group_rank=" + std::to_string(info.group_rank) + "\n";
    out += "info.master_port=" + std::to_string(info.master_port) + "\n";
    write_file(std::string(argv[2]) + "/rank_" + std::to_string(rank) + ".env", out);
    std::printf("rank %d of %d ready\n", rank, env_int("WORLD_SIZE"));
    return 0;
  }
  if (mode == "partial") {
    // Lines written in pieces with pauses between them, on both streams.
    for (int i = 0; i < 40; ++i) {
      std::printf("line %d of rank %d", i, rank);
      std::fflush(stdout);
      sleep_s(0.001);
      std::printf(" piece-b");
      std::fflush(stdout);
      sleep_s(0.001);
      std::printf(" piece-c\n");
      std::fflush(stdout);
      std::fprintf(stderr, "err %d of rank %d\n", i, rank);
    }
    std::printf("no newline at the end from rank %d", rank);
    return 0;
  }
  if (mode == "progress") {
    std::printf("progress 10%%\rprogress 50%%\rprogress 100%%\r\n");
    std::printf("windows line\r\n");
    return 0;
  }
  if (mode == "buffered") {
    // Plain printf without flushing: lines must still arrive one by one.
    std::printf("first line of rank %d\n", rank);
    if (rank == 0) sleep_s(60);  // stopped by the test
    return 0;
  }
  if (mode == "fail-rank" && argc >= 4) {
    // Rank argv[2] fails with code argv[3]; the others wait (argv[4]:
    // "ignore-term" makes them ignore SIGTERM).
    if (rank == std::atoi(argv[2])) {
      sleep_s(0.2);
      brasa::launch::write_error_file("ValueError: the loss went to NaN at step 7\nsecond line");
      std::printf("rank %d about to fail\n", rank);
      return std::atoi(argv[3]);
    }
    if (argc >= 5 && std::string(argv[4]) == "ignore-term") signal(SIGTERM, SIG_IGN);
    std::printf("rank %d waiting\n", rank);
    std::fflush(stdout);
    sleep_s(60);
    std::printf("rank %d finished its wait\n", rank);
    return 0;
  }
  if (mode == "signal-rank" && argc == 4) {
    if (rank == std::atoi(argv[2])) {
      sleep_s(0.1);
      std::printf("rank %d raising signal %s\n", rank, argv[3]);
      std::fflush(stdout);
      signal(std::atoi(argv[3]), SIG_DFL);
      raise(std::atoi(argv[3]));
    }
    sleep_s(60);
    return 0;
  }
  if (mode == "fail-first-attempt") {
    int attempt = env_int("BRASA_RESTART_COUNT");
    std::printf("rank %d attempt %d\n", rank, attempt);
    return attempt == 0 && rank == 1 ? 7 : 0;
  }
  if (mode == "always-fail") {
    std::printf("rank %d attempt %d\n", rank, env_int("BRASA_RESTART_COUNT"));
    return rank == 0 ? 5 : 0;
  }
  if ((mode == "wait-signal" || mode == "sleep-pid") && argc == 3) {
    // Writes its pid, then waits; wait-signal records the signal it gets.
    g_dir = argv[2];
    if (mode == "wait-signal")
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, record_signal);
    write_file(g_dir + "/rank_" + std::to_string(rank) + ".pid.tmp",
               std::to_string(getpid()) + "\n");
    std::rename((g_dir + "/rank_" + std::to_string(rank) + ".pid.tmp").c_str(),
                (g_dir + "/rank_" + std::to_string(rank) + ".pid").c_str());
    sleep_s(60);
    return 3;
  }
  if (mode == "family" && argc == 3) {
    // Starts a child in its own group and one in a session of its own (both
    // would outlive a killed launcher unless it takes care), writes
    // "<worker> <child> <escaped>" to rank_R.family, then waits.
    const pid_t child = fork();
    if (child == 0) {
      sleep_s(60);
      _exit(0);
    }
    const pid_t escaped = fork();
    if (escaped == 0) {
      setsid();
      sleep_s(60);
      _exit(0);
    }
    const std::string base = std::string(argv[2]) + "/rank_" + std::to_string(rank) + ".family";
    write_file(base + ".tmp", std::to_string(getpid()) + " " + std::to_string(child) + " " +
                                  std::to_string(escaped) + "\n");
    std::rename((base + ".tmp").c_str(), base.c_str());
    sleep_s(60);
    return 3;
  }
  if (mode == "bind-port") {
    // MASTER_PORT must be free: rank 0 binds it, as a store server would.
    int port = env_int("MASTER_PORT");
    if (rank != 0) return 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (port <= 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      std::printf("cannot bind port %d: %s\n", port, std::strerror(errno));
      return 1;
    }
    std::printf("bound port %d\n", port);
    close(fd);
    return 0;
  }
  std::fprintf(stderr, "test_worker: unknown mode '%s'\n", mode.c_str());
  return 100;
}
