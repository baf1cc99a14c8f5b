// TCPStore against peers that try to exhaust it: oversized frames before the
// token, idle and half-sent connections, a client that never reads, floods
// of connections (with descriptors to spare and without), and a hostile
// server that announces a huge reply.
#include <brasa/comm/store/tcp_store.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "../../core/test_util.h"
#include "raw_peer.h"

namespace brasa::distributed {
namespace {

using namespace std::chrono_literals;
using namespace test;

TCPStoreOptions server_options(const std::string& token = "") {
  TCPStoreOptions o;
  o.port = 0;
  o.isServer = true;
  o.token = token;
  o.timeout = 5000ms;
  return o;
}

TCPStoreOptions client_options(uint16_t port, const std::string& token = "") {
  TCPStoreOptions o;
  o.port = port;
  o.token = token;
  o.timeout = 3000ms;
  return o;
}

// A client of the server does a few round trips.
void expect_serves(uint16_t port, const std::string& token = "") {
  TCPStore client("127.0.0.1", client_options(port, token));
  for (int i = 0; i < 20; ++i) {
    client.set("k" + std::to_string(i), std::to_string(i));
    EXPECT_EQ(client.add("counter", 1), i + 1);
  }
  EXPECT_EQ(to_string(client.get("k7")), "7");
  client.delete_key("counter");
}

TEST(TCPStoreLimits, FramesBeforeTheTokenAreSmall) {
  TCPStore server("127.0.0.1", server_options("s3cret"));
  // A frame announcing 1 MiB before authenticating is refused at once: the
  // server does not buffer it.
  std::string big = std::string("\x00\x00\x10\x00", 4) + std::string(100, 'x');
  std::string reply = raw_exchange(server.port(), big);
  EXPECT_NE(reply.find("frame length 1048576 is outside [1, 4096] before authentication"),
            std::string::npos)
      << reply;
  expect_serves(server.port(), "s3cret");
}

TEST(TCPStoreLimits, UnauthenticatedAndHalfSentConnectionsAreClosed) {
  auto o = server_options("s3cret");
  o.connectionTimeout = 300ms;
  TCPStore with_token("127.0.0.1", o);
  const auto start = std::chrono::steady_clock::now();
  int idle = raw_connect(with_token.port());
  std::string reply = read_until_closed(idle);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::close(idle);
  EXPECT_NE(reply.find("no token within 300 ms"), std::string::npos) << reply;
  EXPECT_GE(waited, 0.29);
  EXPECT_LT(waited, 2.0);

  o.token = "";
  TCPStore without_token("127.0.0.1", o);
  int half = raw_connect(without_token.port());
  ::send(half, "\x10\x00\x00\x00\x02", 5, MSG_NOSIGNAL);  // 16 bytes announced, 1 sent
  reply = read_until_closed(half);
  ::close(half);
  EXPECT_NE(reply.find("a frame was left half-sent for 300 ms"), std::string::npos) << reply;
  // An idle connection that has authenticated (a worker between two
  // requests) stays, however long.
  TCPStore worker("127.0.0.1", client_options(with_token.port(), "s3cret"));
  worker.set("k", "v");
  std::this_thread::sleep_for(700ms);
  EXPECT_EQ(to_string(worker.get("k")), "v");
}

TEST(TCPStoreLimits, AClientThatDoesNotReadHoldsUpNoOne) {
  auto o = server_options();
  o.connectionTimeout = 500ms;
  TCPStore server("127.0.0.1", o);
  const size_t value_bytes = 8u << 20;
  server.set("big", std::string(value_bytes, 'v'));
  // 50 requests for 8 MiB each, and never a read: 400 MiB if the server
  // answered them all.
  int greedy = raw_connect(server.port());
  std::string requests;
  for (int i = 0; i < 50; ++i) requests += get_request("big");
  ASSERT_EQ(::send(greedy, requests.data(), requests.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(requests.size()));
  std::this_thread::sleep_for(100ms);
  const auto start = std::chrono::steady_clock::now();
  expect_serves(server.port());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  // The server answers one request at a time, and closes the connection
  // when the answer is not taken: what reaches the reader is at most the
  // first reply.
  std::this_thread::sleep_for(800ms);
  const std::string got = read_until_closed(greedy);
  ::close(greedy);
  EXPECT_LE(got.size(), value_bytes + 13);
  expect_serves(server.port());
}

TEST(TCPStoreLimits, IdleConnectionsCannotCrowdOutWorkers) {
  for (const std::string token : {"", "s3cret"}) {
    auto o = server_options(token);
    o.maxConnections = 8;
    TCPStore server("127.0.0.1", o);  // its own client is one of the 8
    std::vector<int> idle;
    for (int i = 0; i < 40; ++i) idle.push_back(raw_connect(server.port()));
    std::this_thread::sleep_for(100ms);
    expect_serves(server.port(), token);
    for (int fd : idle) ::close(fd);
    // The server's own client proved itself first and was never displaced.
    server.set("still", "here");
    EXPECT_EQ(to_string(server.get("still")), "here");
  }
}

TEST(TCPStoreLimits, AtTheLimitWithNoIdleConnectionANewOneIsRefused) {
  auto o = server_options();
  o.maxConnections = 2;
  TCPStore server("127.0.0.1", o);                              // its own client: 1
  TCPStore worker("127.0.0.1", client_options(server.port()));  // 2, both proved
  int late = raw_connect(server.port());
  const std::string reply = read_until_closed(late);
  ::close(late);
  EXPECT_NE(reply.find("already serving 2 connections (maxConnections); closing this one"),
            std::string::npos)
      << reply;
  worker.set("k", "v");  // the two are unharmed
  EXPECT_EQ(to_string(server.get("k")), "v");
}

// CPU seconds (user + system) a process has used, from /proc/<pid>/stat.
double cpu_seconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(f, line);
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

TEST(TCPStoreLimits, OutOfDescriptorsTheServerNeitherSpinsNorStarves) {
  int port_pipe[2];
  ASSERT_EQ(::pipe(port_pipe), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The server process may open 40 descriptors in all.
    rlimit low{40, 40};
    ::setrlimit(RLIMIT_NOFILE, &low);
    TCPStore server("127.0.0.1", server_options());
    const uint16_t port = server.port();
    (void)!::write(port_pipe[1], &port, sizeof port);
    ::pause();
    ::_exit(0);
  }
  uint16_t port = 0;
  ASSERT_EQ(::read(port_pipe[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
  ::close(port_pipe[0]);
  ::close(port_pipe[1]);
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) idle.push_back(raw_connect(port));
  std::this_thread::sleep_for(300ms);
  const double before = cpu_seconds(child);
  std::this_thread::sleep_for(1000ms);
  const double busy = cpu_seconds(child) - before;
  EXPECT_LT(busy, 0.3) << "the server used " << busy << " s of CPU in 1 s while out of fds";
  expect_serves(port);
  for (int fd : idle) ::close(fd);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

TEST(TCPStoreLimits, AHostileServerCannotMakeTheClientAllocate) {
  // A "server" that answers every request with a frame announcing 1 GiB,
  // sends 16 bytes of it, and hangs up.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::listen(listener, 4);
  socklen_t len = sizeof a;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  std::thread hostile([listener] {
    int fd = ::accept(listener, nullptr, nullptr);
    char buf[256];
    (void)::recv(fd, buf, sizeof buf, 0);
    uint32_t announced = TCPStore::kMaxFrameBytes;
    std::string reply(reinterpret_cast<char*>(&announced), 4);
    reply += std::string(16, '\0');
    ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
    ::close(fd);
  });
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  // The client's first request (its greeting) gets the answer.
  EXPECT_ERROR("lost the connection to the server",
               TCPStore("127.0.0.1", client_options(ntohs(a.sin_port))));
  hostile.join();
  ::close(listener);
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  // ru_maxrss is in KiB: the peak grew by less than 64 MiB, not by 1 GiB.
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024);
}

}  // namespace
}  // namespace brasa::distributed
