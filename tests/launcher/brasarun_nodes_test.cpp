// brasarun across several nodes, on loopback (see brasarun_test.cpp for how
// the tests run): two- and three-node jobs, restarts and failures across
// nodes, and the rendezvous that admits only the job's nodes.

#include "brasarun_test_util.h"

namespace {

using namespace brasarun_test;

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

// The job's own node 1 (its workers write their environment into `dir`)
// joins node 0's rendezvous on `port`, and both nodes finish the job.
void join_node1_and_finish(Process& node0, int port, const TempDir& dir) {
  Process node1(
      brasarun({"--nnodes", "2", "--node-rank", "1", "--master-port", std::to_string(port)},
               {"env", dir.path}),
      kJobEnv);
  Result r1 = node1.finish();
  Result r0 = node0.finish();
  EXPECT_EQ(r0.exit_code, 0) << r0.err;
  EXPECT_EQ(r1.exit_code, 0) << r1.err;
}

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

// Sends one line to 127.0.0.1:port and returns what comes back before the
// connection closes.
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
  join_node1_and_finish(node0, port, dir);
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
  join_node1_and_finish(node0, port, dir);
}

TEST(Brasarun, MissingNodeTimesOutWithItsName) {
  Process node0(brasarun({"--nnodes", "3", "--node-rank", "0", "--rdzv-timeout", "1"},
                         {"env", "/nonexistent"}),
                kJobEnv);
  Result r = node0.finish();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("node(s) 1, 2 did not join"), std::string::npos) << r.err;
}

}  // namespace
