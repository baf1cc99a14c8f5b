#pragma once
// TCPStore: a Store served by one process (usually rank 0) over TCP. The
// server is a thread of the TCPStore created with isServer = true; every
// TCPStore, the server's own included, is a client of it.
//
// Frames are length-prefixed and checked on receipt: a malformed frame gets an
// error reply and the connection is closed; the server goes on serving the
// others. Sockets are non-blocking and every connection is bounded (see
// TCPStoreOptions::connectionTimeout and maxConnections), so that idle, slow
// or half-sent connections cannot starve the others. With a token (TCPStoreOptions::token, or
// BRASA_STORE_TOKEN in the environment, which brasarun sets for the workers of a single-node job) a
// client must present the same token before anything else. A server created
// for a loopback host (127.0.0.1, localhost) listens on loopback only.

#include <brasa/comm/store/store.h>

#include <memory>
#include <mutex>
#include <optional>

namespace brasa::distributed {

// Field names as in c10d::TCPStoreOptions, so that libtorch code ports.
struct TCPStoreOptions {
  uint16_t port = 29500;  // 0 with isServer: any free port (see TCPStore::port())
  bool isServer = false;
  std::optional<size_t> numWorkers;  // with waitWorkers: the server waits for them
  bool waitWorkers = true;
  std::chrono::milliseconds timeout = Store::kDefaultTimeout;
  std::string token;  // empty: BRASA_STORE_TOKEN if set, otherwise none
  // Brasa's limits on the server, so that no peer can exhaust it: a
  // connection gets this long to present its token, to finish a frame it has
  // begun, and to take a reply it has asked for, or it is closed.
  std::chrono::milliseconds connectionTimeout{10000};
  // Connections served at once. At the limit (or out of file descriptors) a
  // new connection displaces the oldest one that has not yet proved itself
  // (authenticated, or with no token sent a whole request); if there is none
  // it is refused with an error reply.
  size_t maxConnections = 1024;
};

class TCPStore : public Store {
 public:
  static constexpr uint32_t kMaxFrameBytes = 1u << 30;
  // The largest frame a connection may send before it has authenticated.
  static constexpr uint32_t kMaxFrameBytesBeforeAuth = 4096;

  TCPStore(std::string host, const TCPStoreOptions& options = {});
  // c10d's older constructor.
  TCPStore(const std::string& host, uint16_t port, std::optional<int> num_workers = std::nullopt,
           bool is_server = false, std::chrono::milliseconds timeout = kDefaultTimeout,
           bool wait_workers = true);
  ~TCPStore() override;

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  void append(const std::string& key, const Bytes& value) override;
  std::vector<Bytes> multi_get(const std::vector<std::string>& keys) override;
  void multi_set(const std::vector<std::string>& keys, const std::vector<Bytes>& values) override;
  using Store::set;

  uint16_t port() const { return port_; }
  uint16_t getPort() const { return port_; }
  const std::string& host() const { return host_; }
  bool is_server() const { return server_ != nullptr; }

 private:
  class Server;
  struct Reply;
  Reply request(const Bytes& frame, const char* op);
  Reply read_reply(std::chrono::steady_clock::time_point deadline, const char* op);
  void connect_client(std::chrono::milliseconds timeout);
  void wait_for_workers(size_t num_workers);
  std::string where() const;

  std::string host_;
  uint16_t port_ = 0;
  std::unique_ptr<Server> server_;
  std::mutex mu_;  // one request at a time on the connection
  int fd_ = -1;
};

}  // namespace brasa::distributed
