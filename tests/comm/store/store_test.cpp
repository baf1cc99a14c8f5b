// The semantics every Store shares, checked on each kind, and what is
// particular to FileStore and TCPStore.

#include <brasa/comm/store/file_store.h>
#include <brasa/comm/store/hash_store.h>
#include <brasa/comm/store/prefix_store.h>
#include <brasa/comm/store/tcp_store.h>
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <thread>

#include "../../core/test_util.h"
#include "raw_peer.h"

namespace brasa::distributed {
namespace {

using namespace std::chrono_literals;
using test::frame;
using test::raw_exchange;

std::string unique_path(const std::string& name) {
  static std::atomic<int> n{0};
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++)))
      .string();
}

// Makes a store of each kind; for a shared store, `another()` gives a second
// handle to the same data (another client, another opening of the file).
struct StoreMaker {
  std::string name;
  std::function<std::shared_ptr<Store>()> first;
  std::function<std::shared_ptr<Store>()> another;
};

class StoreSemantics : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string kind = GetParam();
    if (kind == "hash") {
      auto s = std::make_shared<HashStore>();
      store_ = s;
      other_ = s;
    } else if (kind == "file") {
      path_ = unique_path("brasa-filestore");
      store_ = std::make_shared<FileStore>(path_, 2);
      other_ = std::make_shared<FileStore>(path_, 2);
    } else if (kind == "tcp") {
      TCPStoreOptions o;
      o.port = 0;
      o.isServer = true;
      auto server = std::make_shared<TCPStore>("127.0.0.1", o);
      TCPStoreOptions c;
      c.port = server->port();
      store_ = server;
      other_ = std::make_shared<TCPStore>("127.0.0.1", c);
    } else if (kind == "prefix") {
      auto base = std::make_shared<HashStore>();
      store_ = std::make_shared<PrefixStore>("group1", base);
      other_ = std::make_shared<PrefixStore>("group1", base);
      base_ = base;
    }
    store_->set_timeout(5000ms);
    other_->set_timeout(5000ms);
  }
  void TearDown() override {
    other_.reset();
    store_.reset();
    if (!path_.empty()) {
      EXPECT_FALSE(std::filesystem::exists(path_)) << "the last FileStore removes its file";
      std::filesystem::remove(path_);
    }
  }
  std::shared_ptr<Store> store_, other_, base_;
  std::string path_;
};

TEST_P(StoreSemantics, SetGetOverwrite) {
  store_->set("a", "1");
  EXPECT_EQ(to_string(other_->get("a")), "1");
  other_->set("a", to_bytes("two"));
  EXPECT_EQ(to_string(store_->get("a")), "two");
  Bytes binary{0, 255, 10, 0, 13};
  store_->set("bin", binary);
  EXPECT_EQ(other_->get("bin"), binary);
  store_->set("empty", Bytes{});
  EXPECT_EQ(other_->get("empty"), Bytes{});
  EXPECT_TRUE(store_->check({"empty"}));
}

TEST_P(StoreSemantics, AddCounts) {
  EXPECT_EQ(store_->add("n", 5), 5);
  EXPECT_EQ(other_->add("n", -2), 3);
  EXPECT_EQ(store_->add("n", 0), 3);
  EXPECT_EQ(to_string(other_->get("n")), "3");
  store_->set("text", "abc");
  EXPECT_ERROR("holds a value that is not an integer ('abc')", store_->add("text", 1));
  // Overflow is an error that leaves the value as it was (found by tests/fuzz).
  store_->add("big", std::numeric_limits<int64_t>::max());
  EXPECT_ERROR("big' holds 9223372036854775807 and adding 1 would overflow int64",
               other_->add("big", 1));
  EXPECT_EQ(store_->add("big", -1), std::numeric_limits<int64_t>::max() - 1);
}

TEST_P(StoreSemantics, CompareSet) {
  // Missing key with an empty expectation: set.
  EXPECT_EQ(to_string(store_->compare_set("k", {}, to_bytes("v1"))), "v1");
  // Wrong expectation: unchanged, the current value comes back.
  EXPECT_EQ(to_string(other_->compare_set("k", to_bytes("nope"), to_bytes("v2"))), "v1");
  // Right expectation: replaced.
  EXPECT_EQ(to_string(other_->compare_set("k", to_bytes("v1"), to_bytes("v2"))), "v2");
  EXPECT_EQ(to_string(store_->get("k")), "v2");
  // Missing key with a non-empty expectation: not set, the expectation comes back.
  EXPECT_EQ(to_string(store_->compare_set("missing", to_bytes("x"), to_bytes("y"))), "x");
  EXPECT_FALSE(store_->check({"missing"}));
}

TEST_P(StoreSemantics, CheckDeleteNumKeys) {
  int64_t base = store_->num_keys();
  EXPECT_FALSE(store_->check({"x"}));
  store_->set("x", "1");
  store_->set("y", "2");
  EXPECT_TRUE(other_->check({"x", "y"}));
  EXPECT_FALSE(other_->check({"x", "z"}));
  EXPECT_EQ(other_->num_keys(), base + 2);
  EXPECT_TRUE(other_->delete_key("x"));
  EXPECT_FALSE(store_->delete_key("x"));
  EXPECT_FALSE(store_->check({"x"}));
  EXPECT_EQ(store_->num_keys(), base + 1);
}

TEST_P(StoreSemantics, AppendMultiGetMultiSet) {
  store_->append("log", to_bytes("ab"));
  other_->append("log", to_bytes("cd"));
  EXPECT_EQ(to_string(store_->get("log")), "abcd");
  store_->multi_set({"m1", "m2", "m3"}, {to_bytes("1"), to_bytes("22"), to_bytes("333")});
  auto values = other_->multi_get({"m3", "m1", "m2"});
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(to_string(values[0]), "333");
  EXPECT_EQ(to_string(values[1]), "1");
  EXPECT_EQ(to_string(values[2]), "22");
  EXPECT_ERROR("2 keys but 1 values", store_->multi_set({"a", "b"}, {to_bytes("1")}));
}

TEST_P(StoreSemantics, WaitAndGetSeeAKeySetLater) {
  std::thread setter([&] {
    std::this_thread::sleep_for(50ms);
    other_->set("late", "here");
    other_->set("late2", "too");
  });
  store_->wait({"late", "late2"});
  EXPECT_EQ(to_string(store_->get("late")), "here");
  setter.join();
}

TEST_P(StoreSemantics, MissingKeyFailsInAboutItsTimeout) {
  store_->set_timeout(300ms);
  auto t0 = std::chrono::steady_clock::now();
  try {
    store_->get("never");
    ADD_FAILURE() << "get of a missing key returned";
  } catch (const DistTimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("never'"), std::string::npos) << e.what();
  }
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 0.29);
  EXPECT_LT(waited, 5.0) << "a timeout of 300 ms must not wait much longer";

  store_->set("present", "1");
  try {
    store_->wait({"present", "absent"}, 100ms);
    ADD_FAILURE() << "wait returned";
  } catch (const DistTimeoutError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("absent'"), std::string::npos) << what;
    EXPECT_EQ(what.find("present'"), std::string::npos) << "only missing keys are named: " << what;
  }
  // The store still works after a timeout.
  store_->set("after", "ok");
  EXPECT_EQ(to_string(other_->get("after")), "ok");
}

TEST_P(StoreSemantics, ManyThreadsAddConcurrently) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      auto& s = t % 2 ? other_ : store_;
      for (int i = 0; i < 50; ++i) s->add("shared", 1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(store_->add("shared", 0), 200);
}

INSTANTIATE_TEST_SUITE_P(Kinds, StoreSemantics, ::testing::Values("hash", "file", "tcp", "prefix"),
                         [](const auto& info) { return info.param; });

TEST(FileStore, UnopenablePathIsNamed) {
  EXPECT_ERROR("FileStore: cannot open '/nonexistent-dir/store': No such file or directory",
               FileStore("/nonexistent-dir/store", 1));
  EXPECT_ERROR("FileStore: the path is empty", FileStore("", 1));
}

TEST(TCPStore, ClientNeedsAPort) {
  TCPStoreOptions o;
  o.port = 0;
  EXPECT_ERROR("TCPStore: a client needs the server's port (got port 0)", TCPStore("127.0.0.1", o));
}

TEST(PrefixStore, KeysLiveUnderThePrefix) {
  auto base = std::make_shared<HashStore>();
  PrefixStore a("a", base), b("b", base);
  a.set("k", "from a");
  b.set("k", "from b");
  EXPECT_EQ(to_string(base->get("a/k")), "from a");
  EXPECT_EQ(to_string(base->get("b/k")), "from b");
  EXPECT_EQ(to_string(a.get("k")), "from a");
  EXPECT_ERROR("PrefixStore: the underlying store is null", PrefixStore("p", nullptr));
}

// ---- TCPStore ----

// The first IPv4 address of this machine that is not loopback ("" when none).
std::string non_loopback_address() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* i = list; i && found.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    const auto* a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if ((ntohl(a->sin_addr.s_addr) >> 24) == 127) continue;
    char buf[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    found = buf;
  }
  freeifaddrs(list);
  return found;
}

// Whether a TCP connection to address:port is accepted.
bool accepts(const std::string& address, uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

TEST(TCPStore, AServerForLoopbackListensOnLoopbackOnly) {
  const std::string other = non_loopback_address();
  if (other.empty()) GTEST_SKIP() << "this machine has no non-loopback IPv4 address";
  TCPStoreOptions o;
  o.port = 0;
  o.isServer = true;
  o.waitWorkers = false;
  TCPStore local("127.0.0.1", o);
  EXPECT_TRUE(accepts("127.0.0.1", local.port()));
  EXPECT_FALSE(accepts(other, local.port())) << "reachable from " << other;
  TCPStore everywhere(other, o);  // created for another address: every interface, as c10d
  EXPECT_TRUE(accepts(other, everywhere.port()));
}

std::shared_ptr<TCPStore> make_server(const std::string& token = "") {
  TCPStoreOptions o;
  o.port = 0;
  o.isServer = true;
  o.token = token;
  o.timeout = 5000ms;
  return std::make_shared<TCPStore>("127.0.0.1", o);
}

TEST(TCPStore, PortInUseIsNamed) {
  auto server = make_server();
  TCPStoreOptions o;
  o.port = server->port();
  o.isServer = true;
  EXPECT_ERROR("TCPStore: port " + std::to_string(server->port()) + " is already in use",
               TCPStore("127.0.0.1", o));
}

TEST(TCPStore, TokenIsRequiredAndChecked) {
  auto server = make_server("s3cret");
  server->set("k", "v");
  TCPStoreOptions o;
  o.port = server->port();
  o.timeout = 2000ms;
  o.token = "s3cret";
  TCPStore good("127.0.0.1", o);
  EXPECT_EQ(to_string(good.get("k")), "v");

  o.token = "wrong";
  EXPECT_ERROR("wrong token", TCPStore("127.0.0.1", o));
  // No token at all: refused when connecting.
  o.token = "";
  unsetenv("BRASA_STORE_TOKEN");
  EXPECT_ERROR("this server needs a token first", TCPStore("127.0.0.1", o));
  // The server is unharmed.
  EXPECT_EQ(to_string(good.get("k")), "v");
}

TEST(TCPStore, TokenFromTheEnvironment) {
  setenv("BRASA_STORE_TOKEN", "from-env", 1);
  auto server = make_server();
  TCPStoreOptions o;
  o.port = server->port();
  TCPStore client("127.0.0.1", o);
  client.set("k", "v");
  EXPECT_EQ(to_string(server->get("k")), "v");
  unsetenv("BRASA_STORE_TOKEN");
  o.timeout = 2000ms;
  EXPECT_ERROR("needs a token", TCPStore("127.0.0.1", o));
}

TEST(TCPStore, MalformedFramesAreRejectedAndTheServerGoesOn) {
  auto server = make_server();
  server->set("k", "v");
  const std::string huge_len = std::string("\xff\xff\xff\x7f", 4) + "x";
  const std::string unknown_op = frame(std::string("\x63", 1));
  // SET with a key length that runs past the end of the frame.
  const std::string overrun =
      frame(std::string("\x02\x10\x00\x00\x00"
                        "ab",
                        7));
  // NUM_KEYS with trailing bytes.
  const std::string trailing = frame(std::string("\x08junk", 5));
  const std::string zero_len = std::string(4, '\0');
  for (const auto& [bytes, message] :
       std::vector<std::pair<std::string, std::string>>{{huge_len, "frame length"},
                                                        {unknown_op, "unknown operation 99"},
                                                        {overrun, "runs past the end of its frame"},
                                                        {trailing, "unexpected trailing byte"},
                                                        {zero_len, "frame length 0"}}) {
    std::string reply = raw_exchange(server->port(), bytes);
    EXPECT_NE(reply.find(message), std::string::npos) << "reply: " << reply;
    // Still serving.
    EXPECT_EQ(to_string(server->get("k")), "v");
  }
  // A client that sends half a frame and disconnects is forgotten.
  raw_exchange(server->port(), std::string("\x10\x00\x00\x00\x02", 5));
  TCPStoreOptions o;
  o.port = server->port();
  TCPStore client("127.0.0.1", o);
  EXPECT_EQ(to_string(client.get("k")), "v");
}

TEST(TCPStore, NoServerMeansAClearTimeout) {
  int port;
  {
    auto server = make_server();
    port = server->port();
  }
  TCPStoreOptions o;
  o.port = static_cast<uint16_t>(port);
  o.timeout = 300ms;
  EXPECT_ERROR("cannot connect to the server at 127.0.0.1:" + std::to_string(port),
               TCPStore("127.0.0.1", o));
}

TEST(TCPStore, ServerGoneIsANetworkError) {
  auto server = make_server();
  TCPStoreOptions o;
  o.port = server->port();
  o.timeout = 2000ms;
  TCPStore client("127.0.0.1", o);
  client.set("k", "v");
  server.reset();
  try {
    client.get("k");
    ADD_FAILURE() << "no error";
  } catch (const DistNetworkError& e) {
    EXPECT_NE(std::string(e.what()).find("lost the connection"), std::string::npos) << e.what();
  }
}

TEST(TCPStore, ServerWaitsForItsWorkers) {
  TCPStoreOptions o;
  o.port = 0;
  o.isServer = true;
  o.numWorkers = 3;
  o.timeout = 300ms;
  EXPECT_ERROR("only 1 of 3 workers connected", TCPStore("127.0.0.1", o));
}

TEST(TCPStore, CamelCaseConstructorAndNames) {
  auto server = make_server();
  TCPStore client("127.0.0.1", server->port(), std::nullopt, false,
                  std::chrono::milliseconds(2000));
  client.set("a", "1");
  EXPECT_EQ(client.getNumKeys(), server->getNumKeys());
  EXPECT_TRUE(client.deleteKey("a"));
  EXPECT_EQ(client.getPort(), server->getPort());
  EXPECT_EQ(client.getTimeout(), std::chrono::milliseconds(2000));
}

}  // namespace
}  // namespace brasa::distributed
