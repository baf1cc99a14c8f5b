#include "tcp_store.h"

#include <brasa/comm/store/tcp_store_wire.h>
#include <brasa/util/secret.h>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

namespace brasa::distributed {

using namespace wire;

namespace {

std::string token_from(const TCPStoreOptions& o) {
  if (!o.token.empty()) return o.token;
  const char* env = std::getenv("BRASA_STORE_TOKEN");
  return env ? env : "";
}

// Whether `host` names this machine's loopback (127.0.0.0/8, "localhost").
bool is_loopback(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) return false;
  const uint32_t addr = ntohl(reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr.s_addr);
  ::freeaddrinfo(res);
  return (addr >> 24) == 127;
}

}  // namespace

// ---- the server ----

class TCPStore::Server {
 public:
  // Listens on the loopback interface only when `loopback_only` (a store
  // created for 127.0.0.1 or localhost), otherwise on every interface.
  Server(uint16_t port, std::string token, bool loopback_only, const TCPStoreOptions& limits)
      : token_(std::move(token)),
        connection_timeout_(limits.connectionTimeout),
        max_connections_(std::max<size_t>(limits.maxConnections, 1)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0)
      BRASA_DIST_THROW(DistNetworkError, "TCPStore: socket: ", std::strerror(errno));
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(loopback_only ? INADDR_LOOPBACK : INADDR_ANY);
    a.sin_port = htons(port);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      int e = errno;
      ::close(listen_fd_);
      if (e == EADDRINUSE)
        BRASA_DIST_THROW(
            DistNetworkError, "TCPStore: port ", port,
            " is already in use (another job, or a server of an earlier run that is still alive?); "
            "choose another MASTER_PORT or port 0 for a free one");
      BRASA_DIST_THROW(DistNetworkError, "TCPStore: cannot bind port ", port, ": ",
                       std::strerror(e));
    }
    ::listen(listen_fd_, 1024);
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0)
      BRASA_DIST_THROW(DistError, "TCPStore: pipe2: ", std::strerror(errno));
    thread_ = std::thread([this] { loop(); });
  }
  ~Server() {
    (void)!::write(wake_[1], "x", 1);
    thread_.join();
    for (auto& c : clients_) ::close(c.fd);
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }
  uint16_t port() const { return port_; }

 private:
  using Clock = std::chrono::steady_clock;

  struct Client {
    int fd = -1;
    Bytes in;
    Bytes out;  // replies not yet taken by the peer; no request is read meanwhile
    size_t out_sent = 0;
    bool authenticated = false;
    bool proven = false;  // authenticated, or (no token) sent a whole valid request
    bool waiting = false;
    std::vector<std::string> wait_keys;
    bool closed = false;
    Clock::time_point accepted_at, last_progress;  // last bytes in or out
  };

  // One poll per turn; wakes at least every 250 ms to enforce the timeouts.
  void loop() {
    for (;;) {
      const auto now = Clock::now();
      const bool listening = now >= accept_paused_until_;
      std::vector<pollfd> fds{{wake_[0], POLLIN, 0},
                              {listen_fd_, short(listening ? POLLIN : 0), 0}};
      for (auto& c : clients_) fds.push_back({c.fd, short(c.out.empty() ? POLLIN : POLLOUT), 0});
      if (::poll(fds.data(), fds.size(), 250) < 0 && errno != EINTR) return;
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) accept_one();
      for (size_t i = 0; i + 2 < fds.size(); ++i) {
        if (!fds[i + 2].revents || clients_[i].closed) continue;
        if (clients_[i].out.empty())
          receive(clients_[i]);
        else if (flush(clients_[i]))
          process(clients_[i]);  // requests that waited for the reply to drain
      }
      enforce_timeouts(Clock::now());
      for (auto& c : clients_)
        if (c.closed) ::close(c.fd);
      clients_.erase(std::remove_if(clients_.begin(), clients_.end(),
                                    [](const Client& c) { return c.closed; }),
                     clients_.end());
    }
  }

  // The oldest connection that has not proved itself, or null.
  Client* displaceable() {
    Client* oldest = nullptr;
    for (auto& c : clients_)
      if (!c.closed && !c.proven && (!oldest || c.accepted_at < oldest->accepted_at)) oldest = &c;
    return oldest;
  }

  void accept_one() {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: free one held by an unproven connection, or stop
        // listening for a moment rather than spin on a listen queue that
        // stays readable.
        if (Client* c = displaceable())
          reject(*c, "the server is out of file descriptors and this connection was idle");
        else
          accept_paused_until_ = Clock::now() + std::chrono::milliseconds(100);
      }
      return;
    }
    size_t open = 0;
    for (auto& c : clients_) open += c.closed ? 0 : 1;
    if (open >= max_connections_) {
      Client* c = displaceable();
      if (!c) {
        send_all(
            fd, error_reply("TCPStore server: already serving " + std::to_string(max_connections_) +
                            " connections (maxConnections); closing this one"));
        ::close(fd);
        return;
      }
      reject(*c, "too many connections; this one was displaced as the oldest that was idle");
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Client c;
    c.fd = fd;
    c.authenticated = token_.empty();
    c.accepted_at = c.last_progress = Clock::now();
    clients_.push_back(std::move(c));
  }

  // A connection that has not authenticated, that stopped in the middle of a
  // frame, or that does not take its reply, within the timeout, is closed.
  void enforce_timeouts(Clock::time_point now) {
    for (auto& c : clients_) {
      if (c.closed) continue;
      const bool stalled = now - c.last_progress > connection_timeout_;
      if (!c.authenticated && now - c.accepted_at > connection_timeout_)
        reject(c, "no token within " + std::to_string(connection_timeout_.count()) + " ms");
      else if (!c.out.empty() && stalled)
        c.closed = true;  // it does not read: an error reply would not reach it either
      else if (!c.in.empty() && stalled)
        reject(c, "a frame was left half-sent for " + std::to_string(connection_timeout_.count()) +
                      " ms");
    }
  }

  void receive(Client& c) {
    uint8_t buf[65536];
    ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      c.closed = true;
      return;
    }
    if (n < 0) return;
    c.last_progress = Clock::now();
    c.in.insert(c.in.end(), buf, buf + n);
    process(c);
  }

  // Handles the whole frames in c.in, stopping while a reply waits to be
  // taken (so a peer that does not read cannot make the server buffer more).
  void process(Client& c) {
    size_t pos = 0;
    while (!c.closed && c.out.empty() && c.in.size() - pos >= 4) {
      uint32_t len;
      std::memcpy(&len, c.in.data() + pos, 4);
      const uint32_t limit = c.authenticated ? kMaxFrameBytes : kMaxFrameBytesBeforeAuth;
      if (len == 0 || len > limit) {
        reject(c, "frame length " + std::to_string(len) + " is outside [1, " +
                      std::to_string(limit) + "]" +
                      (c.authenticated ? "" : " before authentication"));
        break;
      }
      if (c.in.size() - pos - 4 < len) break;
      try {
        handle(c, Reader(c.in.data() + pos + 4, len));
        if (!c.closed) c.proven = c.authenticated;
      } catch (const ProtocolError& e) {
        reject(c, std::string("malformed frame: ") + e.what());
      }
      pos += 4 + static_cast<size_t>(len);
    }
    if (!c.closed) c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(pos));
  }

  // Sends what it can of c.out without blocking; true when all of it is sent.
  bool flush(Client& c) {
    while (c.out_sent < c.out.size()) {
      ssize_t n = ::send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
      if (n <= 0) {
        c.closed = true;
        return false;
      }
      c.out_sent += static_cast<size_t>(n);
      c.last_progress = Clock::now();
    }
    c.out.clear();
    c.out_sent = 0;
    return true;
  }

  // The error goes out best-effort (the socket does not block), then the
  // connection is closed.
  void reject(Client& c, const std::string& why) {
    const Bytes e = error_reply("TCPStore server: " + why + "; closing the connection");
    ::send(c.fd, e.data(), e.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    c.closed = true;
  }

  void respond(Client& c, const Bytes& frame) {
    c.out.insert(c.out.end(), frame.begin(), frame.end());
    if (c.out.size() == frame.size()) c.last_progress = Clock::now();  // the wait starts now
    flush(c);
  }

  bool has_all(const std::vector<std::string>& keys) const {
    return std::all_of(keys.begin(), keys.end(), [&](const auto& k) { return data_.count(k) > 0; });
  }

  // After a change: wake the clients whose keys are all there now.
  void notify_waiters() {
    for (auto& w : clients_)
      if (w.waiting && !w.closed && has_all(w.wait_keys)) {
        w.waiting = false;
        respond(w, reply(Status::kReady));
      }
  }

  void handle(Client& c, Reader r) {
    auto op = static_cast<Op>(r.u8());
    if (!c.authenticated) {
      const std::string token = op == Op::kAuth ? r.str() : "";
      if (op == Op::kAuth) r.done();
      if (token.empty()) return reject(c, "this server needs a token first (BRASA_STORE_TOKEN)");
      if (!util::same_secret(token, token_)) return reject(c, "wrong token");
      c.authenticated = true;
      return respond(c, reply(Status::kOk));
    }
    Writer ok(static_cast<uint8_t>(Status::kOk));
    switch (op) {
      case Op::kAuth: {  // no token needed: accept any
        r.str();
        r.done();
        return respond(c, ok.finish());
      }
      case Op::kSet: {
        std::string key = r.str();
        Bytes value = r.bytes();
        r.done();
        data_[key] = std::move(value);
        respond(c, ok.finish());
        return notify_waiters();
      }
      case Op::kGet: {
        std::string key = r.str();
        r.done();
        auto it = data_.find(key);
        if (it == data_.end()) return respond(c, error_reply("key '" + key + "' is not set"));
        return respond(c, ok.bytes(it->second).finish());
      }
      case Op::kAdd: {
        std::string key = r.str();
        auto delta = static_cast<int64_t>(r.u64());
        r.done();
        auto it = data_.find(key);
        int64_t value = 0;
        try {
          value = detail::add_to_counter("TCPStore", key, it == data_.end() ? nullptr : &it->second,
                                         delta);
        } catch (const brasa::Error& e) {
          return respond(c, error_reply(e.message()));
        }
        data_[key] = detail::format_counter(value);
        respond(c, ok.u64(static_cast<uint64_t>(value)).finish());
        return notify_waiters();
      }
      case Op::kCompareSet: {
        std::string key = r.str();
        Bytes expected = r.bytes(), desired = r.bytes();
        r.done();
        auto it = data_.find(key);
        bool replace = false;
        Bytes result = detail::compare_set_result(it == data_.end() ? nullptr : &it->second,
                                                  expected, desired, &replace);
        if (replace) data_[key] = desired;
        respond(c, ok.bytes(result).finish());
        if (replace) notify_waiters();
        return;
      }
      case Op::kCheck: {
        auto keys = r.keys();
        r.done();
        return respond(c, ok.u32(has_all(keys) ? 1 : 0).finish());
      }
      case Op::kDelete: {
        std::string key = r.str();
        r.done();
        return respond(c, ok.u32(data_.erase(key) ? 1 : 0).finish());
      }
      case Op::kNumKeys: {
        r.done();
        uint64_t n =
            static_cast<uint64_t>(std::count_if(data_.begin(), data_.end(), [](const auto& kv) {
              return kv.first.rfind(kInternalPrefix, 0) != 0;
            }));
        return respond(c, ok.u64(n).finish());
      }
      case Op::kWait: {
        auto keys = r.keys();
        r.done();
        if (has_all(keys)) return respond(c, reply(Status::kReady));
        c.waiting = true;
        c.wait_keys = std::move(keys);
        return;
      }
      case Op::kCancelWait: {
        r.done();
        c.waiting = false;
        return respond(c, reply(Status::kCanceled));
      }
      case Op::kAppend: {
        std::string key = r.str();
        Bytes value = r.bytes();
        r.done();
        Bytes& v = data_[key];
        v.insert(v.end(), value.begin(), value.end());
        respond(c, ok.finish());
        return notify_waiters();
      }
      case Op::kMultiGet: {
        auto keys = r.keys();
        r.done();
        for (const auto& k : keys)
          if (!data_.count(k)) return respond(c, error_reply("key '" + k + "' is not set"));
        ok.u32(static_cast<uint32_t>(keys.size()));
        for (const auto& k : keys) ok.bytes(data_[k]);
        return respond(c, ok.finish());
      }
      case Op::kMultiSet: {
        auto keys = r.keys();
        std::vector<Bytes> values;
        for (size_t i = 0; i < keys.size(); ++i) values.push_back(r.bytes());
        r.done();
        for (size_t i = 0; i < keys.size(); ++i) data_[keys[i]] = std::move(values[i]);
        respond(c, ok.finish());
        return notify_waiters();
      }
    }
    reject(c, "unknown operation " + std::to_string(static_cast<int>(op)));
  }

  std::string token_;
  std::chrono::milliseconds connection_timeout_;
  size_t max_connections_;
  Clock::time_point accept_paused_until_{};
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  int wake_[2] = {-1, -1};
  std::vector<Client> clients_;
  std::map<std::string, Bytes> data_;
  std::thread thread_;
};

// ---- the client ----

struct TCPStore::Reply {
  Status status;
  Bytes frame;  // the whole frame after its length
  Reader reader() const {
    Reader r(frame.data(), frame.size());
    r.u8();
    return r;
  }
};

TCPStore::TCPStore(std::string host, const TCPStoreOptions& options)
    : Store(options.timeout), host_(std::move(host)), port_(options.port) {
  const std::string token = token_from(options);
  if (options.isServer) {
    server_ = std::make_unique<Server>(options.port, token, is_loopback(host_), options);
    port_ = server_->port();
  }
  BRASA_CHECK(port_ != 0, "TCPStore: a client needs the server's port (got port 0)");
  connect_client(options.timeout);
  // Every client introduces itself at once (with its token, or none), so
  // that the server knows it from an idle connection (see maxConnections).
  request(Writer(static_cast<uint8_t>(Op::kAuth)).str(token).finish(), "connect");
  if (options.numWorkers) {
    add(kWorkersKey, 1);
    if (server_ && options.waitWorkers) wait_for_workers(*options.numWorkers);
  }
}

TCPStore::TCPStore(const std::string& host, uint16_t port, std::optional<int> num_workers,
                   bool is_server, std::chrono::milliseconds timeout, bool wait_workers)
    : TCPStore(host, [&] {
        TCPStoreOptions o;
        o.port = port;
        o.isServer = is_server;
        if (num_workers && *num_workers > 0) o.numWorkers = static_cast<size_t>(*num_workers);
        o.timeout = timeout;
        o.waitWorkers = wait_workers;
        return o;
      }()) {}

TCPStore::~TCPStore() {
  if (fd_ >= 0) ::close(fd_);
}

std::string TCPStore::where() const { return host_ + ":" + std::to_string(port_); }

void TCPStore::connect_client(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error;
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int rc = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &found);
    if (rc != 0) {
      last_error = std::string("cannot resolve host: ") + ::gai_strerror(rc);
    } else {
      for (addrinfo* a = found; a && fd_ < 0; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          fd_ = fd;
        } else {
          last_error = std::strerror(errno);
          ::close(fd);
        }
      }
      ::freeaddrinfo(found);
    }
    if (fd_ >= 0) return;
    if (timeout != kNoTimeout && std::chrono::steady_clock::now() >= deadline)
      BRASA_DIST_THROW(DistTimeoutError, "TCPStore: cannot connect to the server at ", where(),
                       " within ", timeout.count(), " ms (", last_error,
                       "); is rank 0 running and is MASTER_PORT right?");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
}

TCPStore::Reply TCPStore::read_reply(std::chrono::steady_clock::time_point deadline,
                                     const char* op) {
  auto read_exact = [&](uint8_t* p, size_t n) {
    while (n > 0) {
      int wait_ms = -1;
      if (timeout_ != kNoTimeout) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
          BRASA_DIST_THROW(DistTimeoutError, "TCPStore.", op, ": no reply from the server at ",
                           where(), " within ", timeout_.count(), " ms");
        wait_ms = static_cast<int>(std::min<int64_t>(left.count() + 1, 1 << 30));
      }
      pollfd p_fd{fd_, POLLIN, 0};
      int rc = ::poll(&p_fd, 1, wait_ms);
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) continue;  // the deadline check above ends it
      ssize_t got = ::recv(fd_, p, n, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0)
        BRASA_DIST_THROW(DistNetworkError, "TCPStore.", op,
                         ": lost the connection to the server at ", where(), " (did rank 0 exit?)");
      p += got;
      n -= static_cast<size_t>(got);
    }
  };
  uint32_t len = 0;
  read_exact(reinterpret_cast<uint8_t*>(&len), 4);
  if (len == 0 || len > kMaxFrameBytes)
    BRASA_DIST_THROW(DistNetworkError, "TCPStore.", op, ": malformed reply from ", where());
  // The buffer grows with what has arrived, so that a length announced by a
  // broken or hostile server costs no more memory than the bytes it sends.
  Reply r;
  r.frame.resize(std::min<size_t>(len, size_t{1} << 20));
  size_t got = 0;
  while (got < len) {
    if (got == r.frame.size()) r.frame.resize(std::min<size_t>(len, r.frame.size() * 2));
    read_exact(r.frame.data() + got, r.frame.size() - got);
    got = r.frame.size();
  }
  r.status = static_cast<Status>(r.frame[0]);
  if (r.status == Status::kError) {
    std::string message = r.reader().str();
    BRASA_DIST_THROW(DistError, "TCPStore.", op, ": ", message);
  }
  return r;
}

TCPStore::Reply TCPStore::request(const Bytes& frame, const char* op) {
  if (fd_ < 0) BRASA_DIST_THROW(DistNetworkError, "TCPStore.", op, ": not connected to ", where());
  if (!send_all(fd_, frame))
    BRASA_DIST_THROW(DistNetworkError, "TCPStore.", op, ": lost the connection to the server at ",
                     where(), " (did rank 0 exit?)");
  return read_reply(std::chrono::steady_clock::now() + timeout_, op);
}

void TCPStore::wait_for_workers(size_t num_workers) {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    int64_t joined = add(kWorkersKey, 0);
    if (joined >= static_cast<int64_t>(num_workers)) return;
    if (timeout_ != kNoTimeout && std::chrono::steady_clock::now() >= deadline)
      BRASA_DIST_THROW(DistTimeoutError, "TCPStore: only ", joined, " of ", num_workers,
                       " workers connected to ", where(), " within ", timeout_.count(), " ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void TCPStore::set(const std::string& key, const Bytes& value) {
  std::lock_guard<std::mutex> lock(mu_);
  request(Writer(static_cast<uint8_t>(Op::kSet)).str(key).bytes(value).finish(), "set");
}

Bytes TCPStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::lock_guard<std::mutex> lock(mu_);
  return request(Writer(static_cast<uint8_t>(Op::kGet)).str(key).finish(), "get").reader().bytes();
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  std::lock_guard<std::mutex> lock(mu_);
  Reply r = request(
      Writer(static_cast<uint8_t>(Op::kAdd)).str(key).u64(static_cast<uint64_t>(delta)).finish(),
      "add");
  return static_cast<int64_t>(r.reader().u64());
}

Bytes TCPStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  std::lock_guard<std::mutex> lock(mu_);
  return request(Writer(static_cast<uint8_t>(Op::kCompareSet))
                     .str(key)
                     .bytes(expected)
                     .bytes(desired)
                     .finish(),
                 "compare_set")
      .reader()
      .bytes();
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  return request(Writer(static_cast<uint8_t>(Op::kCheck)).keys(keys).finish(), "check")
             .reader()
             .u32() != 0;
}

bool TCPStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  return request(Writer(static_cast<uint8_t>(Op::kDelete)).str(key).finish(), "delete_key")
             .reader()
             .u32() != 0;
}

int64_t TCPStore::num_keys() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(
      request(Writer(static_cast<uint8_t>(Op::kNumKeys)).finish(), "num_keys").reader().u64());
}

void TCPStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!send_all(fd_, Writer(static_cast<uint8_t>(Op::kWait)).keys(keys).finish()))
      BRASA_DIST_THROW(DistNetworkError, "TCPStore.wait: lost the connection to the server at ",
                       where());
    const auto saved = timeout_;
    timeout_ = timeout;  // read_reply's deadline messages use it
    try {
      read_reply(std::chrono::steady_clock::now() + timeout, "wait");
      timeout_ = saved;
      return;
    } catch (const DistTimeoutError&) {
      timeout_ = saved;
    } catch (...) {
      timeout_ = saved;
      throw;
    }
    // Timed out: withdraw the wait. A READY sent meanwhile comes before the
    // CANCELED and is dropped.
    if (!send_all(fd_, Writer(static_cast<uint8_t>(Op::kCancelWait)).finish()))
      BRASA_DIST_THROW(DistNetworkError, "TCPStore.wait: lost the connection to the server at ",
                       where());
    const auto until =
        std::chrono::steady_clock::now() + std::max(timeout_, std::chrono::milliseconds(10000));
    while (read_reply(until, "wait").status != Status::kCanceled) {
    }
  }
  std::vector<std::string> missing;
  for (const auto& k : keys)
    if (!check({k})) missing.push_back(k);
  if (missing.empty()) return;  // they arrived just as the wait was withdrawn
  BRASA_DIST_THROW(DistTimeoutError, "TCPStore.wait: timed out after ", timeout.count(),
                   " ms waiting for key(s) ", detail::quote_keys(missing), " at ", where());
}

void TCPStore::append(const std::string& key, const Bytes& value) {
  std::lock_guard<std::mutex> lock(mu_);
  request(Writer(static_cast<uint8_t>(Op::kAppend)).str(key).bytes(value).finish(), "append");
}

std::vector<Bytes> TCPStore::multi_get(const std::vector<std::string>& keys) {
  wait(keys, timeout_);
  std::lock_guard<std::mutex> lock(mu_);
  Reply r = request(Writer(static_cast<uint8_t>(Op::kMultiGet)).keys(keys).finish(), "multi_get");
  Reader rd = r.reader();
  uint32_t n = rd.u32();
  std::vector<Bytes> values;
  for (uint32_t i = 0; i < n; ++i) values.push_back(rd.bytes());
  return values;
}

void TCPStore::multi_set(const std::vector<std::string>& keys, const std::vector<Bytes>& values) {
  BRASA_CHECK(keys.size() == values.size(), "TCPStore.multi_set: ", keys.size(), " keys but ",
              values.size(), " values");
  std::lock_guard<std::mutex> lock(mu_);
  Writer w(static_cast<uint8_t>(Op::kMultiSet));
  w.keys(keys);
  for (const auto& v : values) w.bytes(v);
  request(w.finish(), "multi_set");
}

}  // namespace brasa::distributed
